// The desk: the session's windows in the page (window.js draws each), their
// stacking and focus, the window list, popups placed by their parent and
// dismissed by a click outside, and what the app asks of a window (maximize,
// fullscreen, minimize). Handed the session, for what it sends.
import { POPUP, REQUEST } from './messages.js';
import { RemoteWindow, placePopup } from './window.js';
import { FILES } from './messages.js';
import { droppedFiles } from './files.js';

export class Desk {
  constructor(session, el, list) {
    this.session = session;
    this.el = el;
    this.list = list;
    this.windows = new Map();
    this.z = 1;
    this.placed = 0;
    this.focused = null;
    // The view (the menu's, kept in the browser): zoom, the page's pixels
    // for one of the app's; fit, windows bigger than the page shown smaller.
    this.zoom = 1;
    this.fit = false;
    // The screen kept awake for an app (a film, a game): the browser's
    // wake lock while the page shows and a window asks; what the tab
    // title was before an urgent window marked it.
    this.wakeLock = null;
    this.asking = false;
    this.title = null;
    document.addEventListener('visibilitychange', () => {
      this.keepAwake();
      if (!document.hidden && this.focused) this.calm(this.focused);
    });
    window.addEventListener('focus', () => this.focused && this.calm(this.focused));
    // A wake lock the browser refused (not visible then, not allowed) is
    // asked again at the person's next touch.
    document.addEventListener('pointerdown', () => this.keepAwake(), true);
    document.addEventListener('keydown', () => this.keepAwake(), true);
  }

  // window_idle_inhibit: the page holds a screen wake lock while it is
  // visible and a window not minimized asks (the browser lets it go when
  // the tab hides; it is asked again when it shows).
  idleInhibit(w, on) {
    w.keepsAwake = on;
    this.keepAwake();
  }

  windowsAsk() {
    return [...this.windows.values()].some((w) => w.keepsAwake && !w.minimized);
  }

  keepAwake() {
    const want = !document.hidden && this.windowsAsk();
    if (want && !this.wakeLock && !this.asking && navigator.wakeLock) {
      this.asking = true;
      navigator.wakeLock.request('screen').then((lock) => {
        this.asking = false;
        this.wakeLock = lock;
        lock.addEventListener('release', () => {
          if (this.wakeLock === lock) this.wakeLock = null;
        });
        this.keepAwake(); // asked meanwhile no more?
      }, (e) => {
        this.asking = false;
        this.wakeRefused = e.message;
        this.session.status(`the screen may sleep: the browser keeps it awake for no page (${e.message})`);
      });
    } else if (!want && this.wakeLock) {
      const lock = this.wakeLock;
      this.wakeLock = null;
      lock.release().catch(() => {});
    }
  }

  // window_activate: a window not in front is marked (its button and the
  // tab's title) until the person goes to it; one in front of a page that
  // shows is already where the person looks.
  activate(w) {
    if (this.focused === w && !w.minimized && !document.hidden && document.hasFocus()) return;
    w.urgent = true;
    w.listButton?.classList.add('rcomp-urgent');
    if (this.title === null) this.title = document.title;
    document.title = `(!) ${w.el.dataset.title || 'rcomp'}: ${this.title}`;
  }

  calm(w) {
    if (!w.urgent) return;
    w.urgent = false;
    w.listButton?.classList.remove('rcomp-urgent');
    if (![...this.windows.values()].some((o) => o.urgent) && this.title !== null) {
      document.title = this.title;
      this.title = null;
    }
  }

  desktop() {
    return {
      awake: Boolean(this.wakeLock),
      asked: this.windowsAsk(),
      refused: this.wakeRefused || null,
      urgent: [...this.windows.values()].filter((w) => w.urgent).map((w) => w.el.dataset.title),
      title: document.title,
    };
  }

  setView({ zoom = this.zoom, fit = this.fit }) {
    this.zoom = Math.max(0.25, Math.min(4, zoom));
    this.fit = fit;
    for (const w of this.windows.values()) {
      w.fitCanvas();
      if (!w.popup) {
        this.sendOutput(w);
        w.refill();
      }
    }
    for (const w of this.windows.values()) if (!w.popup) this.moved(w);
  }

  listen() {
    document.addEventListener('pointerdown', (e) => this.dismissPopups(e), true);
    // Files dropped from the person's desktop: on a window, its app gets
    // them once they are whole; elsewhere they go to the session's
    // download folder.
    this.el.addEventListener('dragover', (e) => {
      if (!e.dataTransfer?.types?.includes('Files')) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    });
    this.el.addEventListener('drop', async (e) => {
      if (!e.dataTransfer?.types?.includes('Files')) return;
      e.preventDefault();
      const el = e.target.closest && e.target.closest('.rcomp-window');
      const w = el ? this.windows.get(Number(el.dataset.window)) : null;
      const [x, y] = w ? this.session.input.windowPoint(w, e.clientX, e.clientY) : [0, 0];
      const items = await droppedFiles(e.dataTransfer);
      this.session.files.give(items, w ? FILES.drop : FILES.upload, w, x, y);
    });
  }

  // What a window sends goes as input: a watcher's never does.
  sendInput(name, values) {
    this.session.sendInput(name, values);
  }

  windowNew(m, popup) {
    let w = this.windows.get(m.window);
    if (w && w.stale && !popup && !w.popup) {
      // The same window after a reconnect: its place and size stay.
      w.stale = false;
      w.setTitle(m.title || '');
      w.el.dataset.appId = m.app_id || '';
      w.pixels = null;
      if (w.stream) w.stream.close();
      w.stream = null;
      this.sendOutput(w);
      if (w.size[0] || w.states) w.configure();
      return;
    }
    if (w) this.destroy(m.window);
    w = new RemoteWindow(this, m, popup);
    this.windows.set(m.window, w);
    if (!popup) this.emptyNote('');
    this.el.append(w.el);
    w.el.style.zIndex = this.z++;
    if (popup) {
      this.placePopup(w);
    } else {
      w.place(16 + 24 * this.placed, 16 + 24 * this.placed);
      this.placed = (this.placed + 1) % 10;
      this.addToList(w);
      this.focus(w);
      // A phone's screen has room for one window: each fills it.
      if (this.narrow()) w.setMaximized(true);
    }
    this.session.input.attach(w);
    w.showHud(this.session.hud.on);
    this.sendOutput(w);
  }

  // The scale the app draws at: the screen's pixels for one of the page's,
  // times the zoom, so a window zoomed in is drawn sharp, not blown up.
  sendOutput(w) {
    const ratio = (window.devicePixelRatio || 1) * (this.fit ? 1 : this.zoom);
    const scale = Math.max(1, Math.min(4, Math.round(ratio)));
    this.session.send('output_info', { window: w.id, refresh_mhz: 60000, scale });
  }

  // Words on the empty desk ('' takes them away); a window takes them
  // away too.
  emptyNote(text) {
    let note = document.getElementById('rcomp-empty');
    if (!text) {
      note?.remove();
      return;
    }
    if (!note) {
      note = document.createElement('p');
      note.id = 'rcomp-empty';
      note.setAttribute('role', 'status');
      this.el.append(note);
    }
    note.textContent = text;
  }

  // Another session opens in the page: none of these windows is its.
  clear() {
    for (const id of [...this.windows.keys()]) this.destroy(id);
  }

  // The snapshot after a reconnect named every window still there: the
  // others are gone.
  dropStale() {
    for (const [id, old] of this.windows) {
      if (old.stale) this.destroy(id);
    }
  }

  destroy(id) {
    const w = this.windows.get(id);
    if (!w) return;
    w.remove();
    this.windows.delete(id);
    if (w.keepsAwake) this.keepAwake();
    if (w.urgent) this.calm(w);
    if (this.focused === w) {
      this.focused = null;
      const next = [...this.windows.values()].filter((o) => !o.popup)
        .sort((a, b) => b.el.style.zIndex - a.el.style.zIndex)[0];
      if (next) this.focus(next);
    }
  }

  placePopup(w) {
    const parent = this.windows.get(w.parent);
    if (!parent) return;
    const pr = parent.canvas.getBoundingClientRect();
    const dr = this.el.getBoundingClientRect();
    const px = pr.left - dr.left;
    const py = pr.top - dr.top;
    // The positioner's numbers are the app's; the page's are zoom times them.
    const z = parent.zoom();
    const bounds = { x: -px / z, y: -py / z, width: dr.width / z, height: dr.height / z };
    const [x, y] = placePopup(w.popup, bounds);
    w.offset = [x, y];
    w.place(px + x * z, py + y * z);
    w.el.style.zIndex = this.z++;
  }

  // A window moved or changed size: its popups follow.
  moved(w) {
    for (const c of this.windows.values()) {
      if (c.popup && c.parent === w.id) this.placePopup(c);
    }
  }

  // A screen as narrow as a phone's.
  narrow() {
    return this.bounds().width < 600;
  }

  bounds() {
    const r = this.el.getBoundingClientRect();
    return { width: r.width, height: r.height };
  }

  focus(w) {
    if (w.popup) return;
    w.el.style.zIndex = this.z++;
    this.moved(w);
    if (w.minimized) this.unminimize(w);
    if (!document.hidden) this.calm(w);
    if (this.focused === w) return;
    const old = this.focused;
    this.focused = w;
    if (old) old.setActivated(false);
    w.setActivated(true);
    for (const o of this.windows.values()) o.listButton?.classList.toggle('rcomp-on', o === w);
    this.session.input.focusMoved(old, w);
    this.session.clipboard.check();
  }

  request(w, r) {
    switch (r) {
      case REQUEST.maximize: w.setMaximized(true); break;
      case REQUEST.unmaximize: w.setMaximized(false); break;
      case REQUEST.fullscreen:
        // The window fills the page; the page fills the screen where the
        // browser allows.
        w.setFullscreen(true);
        this.session.input.fullscreen();
        break;
      case REQUEST.unfullscreen:
        w.setFullscreen(false);
        if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
        break;
      case REQUEST.minimize: this.minimize(w); break;
      default: break;
    }
  }

  minimize(w) {
    w.minimized = true;
    w.el.style.display = 'none';
    w.listButton?.classList.add('rcomp-minimized');
    this.keepAwake();
  }

  unminimize(w) {
    w.minimized = false;
    w.el.style.display = '';
    w.listButton?.classList.remove('rcomp-minimized');
    this.keepAwake();
  }

  // The window list: a button per toplevel; a click raises (or restores)
  // it, a click on the focused one minimizes it.
  addToList(w) {
    const b = document.createElement('button');
    b.className = 'rcomp-list-item';
    b.textContent = w.el.dataset.title || '(untitled)';
    b.addEventListener('click', () => {
      if (this.focused === w && !w.minimized) this.minimize(w);
      else this.focus(w);
    });
    w.listButton = b;
    this.list.append(b);
  }

  // A click outside a grabbing popup dismisses it, and those above it.
  dismissPopups(e) {
    const grabbing = [...this.windows.values()].filter((w) => w.popup && (w.popup.flags & POPUP.grab));
    if (!grabbing.length) return;
    const inside = e.target.closest && e.target.closest('.rcomp-popup');
    const keep = new Set();
    if (inside) {
      // The popup clicked in, and its parents, stay.
      for (let w = this.windows.get(Number(inside.dataset.window)); w && w.popup;
        w = this.windows.get(w.parent)) keep.add(w.id);
    }
    for (const w of grabbing.reverse()) {
      if (!keep.has(w.id)) this.session.send('popup_done', { window: w.id });
    }
  }
}
