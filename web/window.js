// One remote toplevel or popup as an element of the page: a title bar
// (moved by dragging, maximized by a double click, closed by its button),
// edges that resize it (the app gets the new size), and a canvas of its
// pixels, which lossless frames, copy_rect and video draw on.
import { STATES } from './messages.js';

const EDGE = 6; // px of the border that resizes
// xdg_toplevel.resize_edge for each handle
const EDGES = { n: 1, s: 2, w: 4, nw: 5, sw: 6, e: 8, ne: 9, se: 10 };

export class RemoteWindow {
  constructor(desk, m, popup) {
    this.desk = desk; // the desk (desk.js): sendInput(), focus(), moved(), bounds()
    this.id = m.window;
    this.popup = popup; // null for a toplevel, else its positioner
    this.parent = popup ? m.parent : m.parent || 0;
    this.width = 0; // the frames' size, in buffer pixels
    this.height = 0;
    this.scale = 1;
    this.pixels = null; // the lossless copy, as the wire has it
    this.presented = 0;
    this.codec = '';
    this.states = 0;
    this.size = [0, 0]; // what the page asked of the app; 0x0: the app's own
    this.hints = [0, 0, 0, 0];
    this.restores = {}; // by state: where it was before it filled the page
    this.pendingMark = 0;
    this.photon = [];
    this.copies = 0; // copy_rects applied
    this.nextFrame = null; // a decoded video picture waiting for the next paint
    this.paintQueued = false;
    this.skipped = 0; // decoded pictures a newer one replaced before a paint
    this.picture = null; // the last video picture's size
    this.stats = null;

    const el = document.createElement('div');
    el.className = popup ? 'rcomp-window rcomp-popup' : 'rcomp-window';
    this.el = el;
    if (!popup) {
      const bar = document.createElement('div');
      bar.className = 'rcomp-title';
      this.titleEl = document.createElement('span');
      const max = document.createElement('button');
      max.className = 'rcomp-maximize';
      max.title = 'maximize';
      max.textContent = '\u25a1';
      const close = document.createElement('button');
      close.className = 'rcomp-close';
      close.title = 'close';
      close.textContent = '\u2715';
      bar.append(this.titleEl, max, close);
      el.append(bar);
      this.bar = bar;
      close.addEventListener('click', () => desk.sendInput('close', { window: this.id }));
      max.addEventListener('click', () => this.toggleMaximized());
      bar.addEventListener('dblclick', (e) => {
        if (e.target === bar || e.target === this.titleEl) this.toggleMaximized();
      });
      bar.addEventListener('pointerdown', (e) => {
        if (e.button !== 0 || e.target.tagName === 'BUTTON') return;
        this.startMove(e);
      });
      for (const [name, edges] of Object.entries(EDGES)) {
        const h = document.createElement('div');
        h.className = 'rcomp-edge rcomp-edge-' + name;
        h.addEventListener('pointerdown', (e) => {
          if (e.button === 0) this.startResize(e, edges);
        });
        el.append(h);
      }
    }
    this.canvas = document.createElement('canvas');
    this.canvas.width = Math.max(1, m.width);
    this.canvas.height = Math.max(1, m.height);
    this.ctx = this.canvas.getContext('2d');
    this.hud = document.createElement('div');
    this.hud.className = 'rcomp-hud';
    el.append(this.canvas, this.hud);
    el.addEventListener('pointerdown', () => desk.focus(this), true);
    this.setTitle(m.title || '');
    el.dataset.appId = m.app_id || '';
    el.dataset.window = String(this.id);
  }

  setTitle(text) {
    this.el.dataset.title = text;
    if (this.titleEl) this.titleEl.textContent = text;
    if (this.listButton) this.listButton.textContent = text || '(untitled)';
  }

  // Where the canvas is in the page, for pointer positions.
  canvasRect() {
    return this.canvas.getBoundingClientRect();
  }

  place(x, y) {
    this.x = Math.round(x);
    this.y = Math.round(y);
    this.el.style.left = this.x + 'px';
    this.el.style.top = this.y + 'px';
    this.desk.moved(this);
  }

  // The app's size in window coordinates.
  logicalSize() {
    return [this.width / this.scale, this.height / this.scale];
  }

  configure(extra = 0) {
    this.desk.sendInput('configure', {
      window: this.id, width: this.size[0], height: this.size[1], states: this.states | extra,
    });
  }

  // --- moving and resizing, by the page's own handles or as the app asks

  drag(e, onMove, onEnd) {
    const target = e.target;
    target.setPointerCapture(e.pointerId);
    const move = (ev) => onMove(ev.clientX - e.clientX, ev.clientY - e.clientY);
    const end = () => {
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', end);
      target.removeEventListener('pointercancel', end);
      if (onEnd) onEnd();
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', end);
    target.addEventListener('pointercancel', end);
    e.preventDefault();
  }

  startMove(e) {
    if (this.states & (STATES.maximized | STATES.fullscreen)) return;
    const x0 = this.x;
    const y0 = this.y;
    this.drag(e, (dx, dy) => this.place(x0 + dx, Math.max(0, y0 + dy)));
  }

  startResize(e, edges) {
    if (this.states & (STATES.maximized | STATES.fullscreen)) return;
    const [w0, h0] = this.logicalSize();
    const right = this.x + this.el.offsetWidth;
    const bottom = this.y + this.el.offsetHeight;
    this.anchor = { edges, right, bottom };
    const z = this.zoom();
    let queued = false;
    this.drag(e, (px, py) => {
      const dx = px / z; // the page's pixels, in the app's
      const dy = py / z;
      let w = w0;
      let h = h0;
      if (edges & 8) w = w0 + dx;
      if (edges & 4) w = w0 - dx;
      if (edges & 2) h = h0 + dy;
      if (edges & 1) h = h0 - dy;
      this.size = this.clamp(w, h);
      if (!queued) {
        queued = true;
        requestAnimationFrame(() => {
          queued = false;
          this.configure(STATES.resizing);
        });
      }
    }, () => {
      this.configure();
      this.anchor = null;
    });
  }

  clamp(w, h) {
    const [minW, minH, maxW, maxH] = this.hints;
    w = Math.max(1, minW, Math.round(w));
    h = Math.max(1, minH, Math.round(h));
    if (maxW) w = Math.min(w, maxW);
    if (maxH) h = Math.min(h, maxH);
    return [Math.min(w, 8192), Math.min(h, 8192)];
  }

  // The app asked to be moved or resized with a press the page still holds.
  grab(kind, edges, e) {
    if (kind === 1) this.startMove(e);
    else if (kind === 2) this.startResize(e, edges);
  }

  toggleMaximized() {
    this.setMaximized(!(this.states & STATES.maximized));
  }

  setMaximized(on) {
    this.fill(STATES.maximized, 'rcomp-maximized', on);
  }

  setFullscreen(on) {
    this.fill(STATES.fullscreen, 'rcomp-fullscreen', on);
  }

  // Maximized or fullscreen: the window fills the page (below its title
  // bar, which fullscreen hides) and comes back to where it was.
  fill(state, cls, on) {
    if (this.popup || Boolean(this.states & state) === on) return;
    if (on) {
      this.restores[state] = { x: this.x, y: this.y, size: this.currentSize() };
      this.states |= state;
      this.el.classList.add(cls);
      this.place(0, 0);
      this.size = this.filling();
    } else {
      this.states &= ~state;
      this.el.classList.remove(cls);
      const r = this.restores[state];
      this.place(r.x, r.y);
      this.size = r.size;
    }
    this.configure();
  }

  // The app's size that fills the page, at the page's zoom (zoomed in on a
  // phone, the app gets a smaller size, which it lays out anew).
  filling() {
    const b = this.desk.bounds();
    const z = this.desk.zoom;
    const bar = this.bar && !(this.states & STATES.fullscreen) ? this.bar.offsetHeight : 0;
    return this.clamp(b.width / z, (b.height - bar) / z);
  }

  // The page's zoom changed: a window that fills the page fills it again.
  refill() {
    if (!(this.states & (STATES.maximized | STATES.fullscreen))) return;
    this.size = this.filling();
    this.configure();
  }

  // The size to come back to: the app's own when the page never set one.
  currentSize() {
    return this.size[0] && this.size[1] ? this.size : this.logicalSize();
  }

  setActivated(on) {
    const was = this.states;
    if (on) this.states |= STATES.activated;
    else this.states &= ~STATES.activated;
    this.el.classList.toggle('rcomp-focused', on);
    if (!this.popup && was !== this.states) this.configure();
  }

  // --- pictures

  resizeTo(width, height) {
    const [oldW, oldH] = this.logicalSize();
    this.width = width;
    this.height = height;
    this.backing(width, height);
    this.fitCanvas();
    this.image = null;
    this.pixels = null;
    if (this.anchor && (oldW !== width / this.scale || oldH !== height / this.scale)) {
      // A resize from the left or top edge keeps the opposite edge still.
      const { edges, right, bottom } = this.anchor;
      let { x, y } = this;
      if (edges & 4) x = right - this.el.offsetWidth;
      if (edges & 1) y = bottom - this.el.offsetHeight;
      this.place(x, y);
    }
    this.desk.moved(this);
  }

  setScale(scale) {
    this.scale = scale;
    this.fitCanvas();
  }

  // How many of the page's pixels show one of the app's (window
  // coordinates): the desk's zoom, or to fit the page, smaller where the
  // window would not fit (a popup goes with its parent).
  zoom() {
    const desk = this.desk;
    if (this.popup) return desk.windows.get(this.parent)?.zoom() || desk.zoom;
    if (!desk.fit) return desk.zoom;
    const [w, h] = this.logicalSize();
    const b = desk.bounds();
    const bar = this.bar ? this.bar.offsetHeight : 0;
    return Math.min(1, w ? b.width / w : 1, h ? (b.height - bar) / h : 1);
  }

  fitCanvas() {
    const z = this.zoom();
    this.canvas.style.width = this.width / this.scale * z + 'px';
    this.canvas.style.height = this.height / this.scale * z + 'px';
  }

  // The canvas's own pixels: the window's, or a smaller video picture's,
  // which the browser scales to the window's size (its CSS size) as a
  // desktop scales a surface's viewport. A change clears the canvas.
  backing(width, height) {
    if (this.canvas.width !== width) this.canvas.width = width;
    if (this.canvas.height !== height) this.canvas.height = height;
  }

  // A decoded picture not yet painted, superseded.
  dropVideoFrame() {
    if (!this.nextFrame) return;
    this.nextFrame.frame.close();
    this.nextFrame = null;
    this.skipped++;
  }

  video(frame, width, height) {
    if (width !== this.width || height !== this.height) this.resizeTo(width, height);
    this.pixels = null; // lossy now: the next lossless frame resets
    // A picture sent smaller than the window (the server keeps the app's
    // frame rate so) is drawn at its own size and the browser scales it
    // up, with no scaling in the page; one of the window's size, padded
    // to even, is drawn without the padding.
    const pw = frame.displayWidth;
    const ph = frame.displayHeight;
    this.picture = [pw, ph];
    if (pw < (width & ~1) || ph < (height & ~1)) {
      this.backing(pw, ph);
      this.ctx.drawImage(frame, 0, 0);
    } else {
      this.backing(width, height);
      this.ctx.drawImage(frame, 0, 0, width, height, 0, 0, width, height);
    }
  }

  showHud(on) {
    this.hud.style.display = on ? 'block' : 'none';
  }

  remove() {
    this.el.remove();
    if (this.listButton) this.listButton.remove();
    if (this.stream) this.stream.close();
    this.dropVideoFrame();
  }
}

// Where a popup goes, relative to its parent's window geometry, as
// xdg_positioner places it, then flipped and slid to stay in bounds
// (bounds relative to the parent too) where the app allows.
export function placePopup(m, bounds) {
  const point = (anchor, x, y, w, h) => {
    const cx = x + w / 2;
    const cy = y + h / 2;
    switch (anchor) {
      case 1: return [cx, y];
      case 2: return [cx, y + h];
      case 3: return [x, cy];
      case 4: return [x + w, cy];
      case 5: return [x, y];
      case 6: return [x, y + h];
      case 7: return [x + w, y];
      case 8: return [x + w, y + h];
      default: return [cx, cy];
    }
  };
  const extend = (gravity, px, py, w, h) => {
    switch (gravity) {
      case 1: return [px - w / 2, py - h];
      case 2: return [px - w / 2, py];
      case 3: return [px - w, py - h / 2];
      case 4: return [px, py - h / 2];
      case 5: return [px - w, py - h];
      case 6: return [px - w, py];
      case 7: return [px, py - h];
      case 8: return [px, py];
      default: return [px - w / 2, py - h / 2];
    }
  };
  const FLIP_X = { 3: 4, 4: 3, 5: 7, 7: 5, 6: 8, 8: 6 };
  const FLIP_Y = { 1: 2, 2: 1, 5: 6, 6: 5, 7: 8, 8: 7 };
  const at = (anchor, gravity, ox, oy) => {
    const [px, py] = point(anchor, m.anchor_x, m.anchor_y, m.anchor_width, m.anchor_height);
    const [x, y] = extend(gravity, px, py, m.width, m.height);
    return [Math.round(x + ox), Math.round(y + oy)];
  };
  let [x, y] = at(m.anchor, m.gravity, m.offset_x, m.offset_y);
  const outX = (v) => v < bounds.x || v + m.width > bounds.x + bounds.width;
  const outY = (v) => v < bounds.y || v + m.height > bounds.y + bounds.height;
  const ca = m.constraint_adjustment;
  if (outX(x) && (ca & 4)) {
    const [fx] = at(FLIP_X[m.anchor] || m.anchor, FLIP_X[m.gravity] || m.gravity, -m.offset_x, m.offset_y);
    if (!outX(fx)) x = fx;
  }
  if (outY(y) && (ca & 8)) {
    const [, fy] = at(FLIP_Y[m.anchor] || m.anchor, FLIP_Y[m.gravity] || m.gravity, m.offset_x, -m.offset_y);
    if (!outY(fy)) y = fy;
  }
  if (outX(x) && (ca & 1)) x = Math.max(bounds.x, Math.min(x, bounds.x + bounds.width - m.width));
  if (outY(y) && (ca & 2)) y = Math.max(bounds.y, Math.min(y, bounds.y + bounds.height - m.height));
  return [x, y];
}
