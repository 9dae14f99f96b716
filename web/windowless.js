// The gate's apps whose sessions opened no window (a server, a daemon), as
// this browser has seen them: the viewer notes it, and the gate's page
// flags such an entry before it is started again.
const KEPT = 'rcomp-windowless';

function load() {
  try {
    return JSON.parse(localStorage.getItem(KEPT) || '{}');
  } catch (e) {
    return {};
  }
}

export const windowless = {
  had(id) {
    return Boolean(load()[id]);
  },

  note(id, none) {
    const all = load();
    if (Boolean(all[id]) === none) return;
    if (none) all[id] = Date.now();
    else delete all[id];
    try {
      localStorage.setItem(KEPT, JSON.stringify(all));
    } catch (e) {
      // a browser that keeps nothing
    }
  },
};
