// The truth above every window. Where this viewer cannot send input (the
// link is down, another viewer took the session over, the session ended,
// the token was refused, the gate's login is gone), a layer over the whole
// page dims the windows under it, says why, and offers each state's way on
// (buttons and links). Nothing of a window shows through as if alive, and
// no window's z-index reaches it.
export class Veil {
  constructor() {
    this.el = null;
  }

  get shown() {
    return Boolean(this.el);
  }

  // why: the reason (the #rcomp-error line where it is an error); more:
  // what to do, or ''; ways: [{ label, run } | { label, href }]; form: an
  // element to put under them (a token field).
  show(why, { more = '', ways = [], error = true, form = null } = {}) {
    this.hide();
    const el = document.createElement('div');
    el.id = 'rcomp-veil';
    el.setAttribute('role', 'alertdialog');
    el.setAttribute('aria-live', 'assertive');
    const box = document.createElement('div');
    box.className = 'rcomp-veil-box';
    const line = document.createElement('p');
    if (error) line.id = 'rcomp-error';
    line.className = error ? 'rcomp-veil-why rcomp-veil-error' : 'rcomp-veil-why';
    line.textContent = why;
    box.append(line);
    if (more) {
      const p = document.createElement('p');
      p.className = 'rcomp-veil-more';
      p.textContent = more;
      box.append(p);
    }
    if (form) box.append(form);
    const row = document.createElement('p');
    row.className = 'rcomp-veil-ways';
    for (const way of ways) {
      let b;
      if (way.href) {
        b = document.createElement('a');
        b.href = way.href;
      } else {
        b = document.createElement('button');
        b.type = 'button';
        b.addEventListener('click', way.run);
      }
      b.className = 'rcomp-veil-way';
      b.dataset.way = way.id || way.label;
      b.textContent = way.label;
      row.append(b);
    }
    if (ways.length) box.append(row);
    el.append(box);
    document.body.append(el);
    this.el = el;
    (row.querySelector('button, a') || form?.querySelector('input'))?.focus();
  }

  hide() {
    this.el?.remove();
    this.el = null;
  }
}
