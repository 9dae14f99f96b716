// The session's notifications in the page (rcomp-view's notify.c): each
// `notify` shown as the browser's own notification where the person let
// the page (the browser asks once, from a click on the page's offer), and
// always in the page's own list at the top right, where its actions are
// buttons; what becomes of it (an action, a close, its expiry) goes back
// to the app as `notify_reply`. A watcher sees them and answers nothing.
// The menu turns them off; that is kept in the browser.
import { NOTE } from './messages.js';

const KEPT = 'rcomp-notes';
const SHOWN_MS = 8000; // a notification of the desktop's own timeout, in the list
const MAX_SHOWN = 5; // in the list at once: the oldest fold away

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'data') Object.assign(e.dataset, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

function load() {
  try {
    return { off: false, asked: false, ...JSON.parse(localStorage.getItem(KEPT) || '{}') };
  } catch (e) {
    return { off: false, asked: false };
  }
}

export class Notes {
  constructor(session) {
    this.session = session;
    this.kept = load();
    this.notes = new Map(); // id -> {id, app, summary, body, actions, urgency, timer, native}
    this.panel = null;
    this.history = []; // the last ones seen, for the tests and the menu: {id, summary, how}
  }

  keep(changes) {
    Object.assign(this.kept, changes);
    try {
      localStorage.setItem(KEPT, JSON.stringify(this.kept));
    } catch (e) {
      // a browser that keeps nothing: for this page only
    }
  }

  get native() {
    return typeof Notification !== 'undefined' && Notification.permission === 'granted';
  }

  // The browser's permission, asked from the person's click.
  async ask() {
    if (typeof Notification === 'undefined') return 'unsupported';
    this.keep({ asked: true });
    let answer = Notification.permission;
    try {
      answer = await Notification.requestPermission();
    } catch (e) {
      // an old browser's callback form, or none: as it stands
    }
    this.show();
    this.session.menu?.refresh();
    return answer;
  }

  setOff(off) {
    this.keep({ off });
    if (off) for (const id of [...this.notes.keys()]) this.takeDown(id, 0);
    this.show();
  }

  message(m) {
    if (m.message === 'notify') this.add(m);
    else if (m.message === 'notify_close') this.takeDown(m.id, 0);
  }

  add(m) {
    if (this.kept.off) return;
    const parts = m.actions ? m.actions.split('\0') : [];
    const actions = [];
    for (let i = 0; i + 1 < parts.length; i += 2) actions.push([parts[i], parts[i + 1]]);
    const old = this.notes.get(m.id);
    if (old) this.clear(old, true);
    const n = {
      id: m.id, app: m.app, summary: m.summary, body: m.body, actions, urgency: m.urgency,
      timer: null, native: null,
    };
    this.notes.set(m.id, n);
    this.history.unshift({ id: m.id, summary: m.summary, how: 'shown' });
    this.history.length = Math.min(this.history.length, 50);
    // Its life: the app's timeout, or the desktop's own unless critical.
    const ms = m.timeout_ms > 0 ? m.timeout_ms
      : m.timeout_ms === 0 || m.urgency === NOTE.critical ? 0 : SHOWN_MS;
    if (ms) n.timer = setTimeout(() => this.closed(n.id, NOTE.expired), ms);
    if (this.native) this.showNative(n, ms === 0);
    this.show();
  }

  showNative(n, stays) {
    const def = n.actions.find(([key]) => key === 'default');
    try {
      const native = new Notification(n.summary || n.app || 'rcomp', {
        body: n.body, tag: `rcomp-${n.id}`, requireInteraction: stays,
        silent: n.urgency === NOTE.low,
      });
      native.onclick = () => {
        window.focus();
        if (def) this.act(n.id, 'default');
        else this.closed(n.id, NOTE.dismissed);
      };
      native.onclose = () => {
        if (n.native === native) this.closed(n.id, NOTE.dismissed);
      };
      n.native = native;
    } catch (e) {
      // a browser that shows them from a service worker only: the list has it
    }
  }

  clear(n, replaced) {
    clearTimeout(n.timer);
    const native = n.native;
    n.native = null;
    if (native && !replaced) native.close();
  }

  // It went on our side: the app is told why (0: it was the app's or
  // another viewer's doing, and nothing goes back).
  closed(id, reason) {
    const n = this.notes.get(id);
    if (!n) return;
    this.takeDown(id, reason);
    this.reply(id, NOTE.closed, reason, '');
  }

  takeDown(id, reason) {
    const n = this.notes.get(id);
    if (!n) return;
    this.clear(n, false);
    this.notes.delete(id);
    const h = this.history.find((e) => e.id === id && e.how === 'shown');
    if (h) h.how = ['closed', 'expired', 'dismissed', 'closed', 'closed'][reason] || 'closed';
    this.show();
  }

  act(id, key) {
    const n = this.notes.get(id);
    if (!n) return;
    const h = this.history.find((e) => e.id === id && e.how === 'shown');
    this.reply(id, NOTE.action, 0, key);
    this.takeDown(id, 0);
    if (h) h.how = 'action ' + key;
    // As a desktop's daemon does: an action taken closes it.
    this.reply(id, NOTE.closed, NOTE.dismissed, '');
  }

  reply(id, event, reason, action) {
    if (this.session.viewOnly || this.session.watching) return;
    this.session.send('notify_reply', { id, event, reason, action });
  }

  // The list: the open ones, newest on top, with their actions and a close.
  show() {
    const open = [...this.notes.values()].reverse().slice(0, MAX_SHOWN);
    const offer = !this.native && !this.kept.asked && typeof Notification !== 'undefined' &&
      Notification.permission === 'default' && open.length > 0;
    if (!open.length) {
      this.panel?.remove();
      this.panel = null;
      return;
    }
    if (!this.panel) {
      this.panel = el('aside', { id: 'rcomp-notes', className: 'rcomp-keep-keys' });
      this.panel.setAttribute('aria-label', 'notifications of the session');
      this.panel.setAttribute('aria-live', 'polite');
      document.body.append(this.panel);
    }
    const acting = !this.session.viewOnly && !this.session.watching;
    const rows = open.map((n) => {
      const close = el('button', { type: 'button', textContent: '\u2715', title: 'dismiss',
        className: 'rcomp-note-close' });
      close.setAttribute('aria-label', 'dismiss');
      close.addEventListener('click', () => this.closed(n.id, NOTE.dismissed));
      const row = el('div', { className: 'rcomp-note', data: { note: String(n.id),
        urgency: ['low', 'normal', 'critical'][n.urgency] || 'normal' } },
      close, el('div', { className: 'rcomp-note-app', textContent: n.app }),
      el('div', { className: 'rcomp-note-summary', textContent: n.summary }));
      if (n.body) row.append(el('div', { className: 'rcomp-note-body', textContent: n.body }));
      const shown = n.actions.filter(([key]) => key !== 'default');
      if (acting && shown.length) {
        row.append(el('div', { className: 'rcomp-note-actions' }, ...shown.map(([key, label]) => {
          const b = el('button', { type: 'button', textContent: label || key, data: { action: key } });
          b.addEventListener('click', () => this.act(n.id, key));
          return b;
        })));
      }
      if (acting && n.actions.some(([key]) => key === 'default')) {
        row.classList.add('rcomp-note-clickable');
        row.addEventListener('click', (e) => {
          if (!e.target.closest('button')) this.act(n.id, 'default');
        });
      }
      return row;
    });
    if (offer) {
      const yes = el('button', { type: 'button', textContent: 'show on this desktop',
        data: { notes: 'ask' } });
      yes.addEventListener('click', () => this.ask());
      const no = el('button', { type: 'button', textContent: 'here is fine', data: { notes: 'no' } });
      no.addEventListener('click', () => {
        this.keep({ asked: true });
        this.show();
      });
      rows.push(el('div', { className: 'rcomp-note rcomp-note-offer' },
        el('div', { textContent: 'The session\'s notifications can show on this computer\'s desktop.' }),
        el('div', { className: 'rcomp-note-actions' }, yes, no)));
    }
    this.panel.replaceChildren(...rows);
  }

  // For the tests and the menu.
  state() {
    return {
      open: [...this.notes.values()].map((n) => ({ id: n.id, app: n.app, summary: n.summary,
        body: n.body, actions: n.actions, native: Boolean(n.native) })),
      history: this.history.slice(),
      permission: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
      off: this.kept.off,
    };
  }
}
