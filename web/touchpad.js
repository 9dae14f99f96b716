// A phone's screen as a touchpad (the menu's Touch: touchpad): one finger
// moves a pointer drawn over the page, a tap clicks where it points, a tap
// of two fingers clicks the right button, two fingers moving scroll, and a
// tap followed by a drag holds the button down (to select, to move). In
// this mode no finger reaches an app as a touch.
const TAP_MS = 300; // a touch this short that moved this little is a tap
const TAP_MOVE = 12;
const DRAG_MS = 350; // a touch this soon after a tap drags with the button down
const GAIN = 1.5; // the pointer moves this much farther than the finger
const BTN_LEFT = 0x110;
const BTN_RIGHT = 0x111;

export class Touchpad {
  constructor(session, deskEl) {
    this.session = session;
    this.deskEl = deskEl;
    this.on = false;
    this.x = 40;
    this.y = 40;
    this.fingers = new Map(); // pointerId: {x, y, x0, y0, t0}
    this.most = 0; // fingers down at once in this gesture
    this.moved = 0;
    this.lastTap = 0;
    this.dragging = false;
    this.over = null; // the window under the pointer
    this.cursor = null;
    this.handlers = {
      pointerdown: (e) => this.down(e),
      pointermove: (e) => this.move(e),
      pointerup: (e) => this.up(e),
      pointercancel: (e) => this.up(e),
    };
  }

  enable(on) {
    if (on === this.on) return;
    this.on = on;
    for (const [type, f] of Object.entries(this.handlers)) {
      if (on) this.deskEl.addEventListener(type, f, true);
      else this.deskEl.removeEventListener(type, f, true);
    }
    if (on) {
      this.cursor = document.createElement('div');
      this.cursor.id = 'rcomp-touch-cursor';
      document.body.append(this.cursor);
      this.draw();
    } else {
      this.cursor?.remove();
      this.cursor = null;
      this.fingers.clear();
    }
  }

  draw() {
    if (!this.cursor) return;
    this.cursor.style.transform = `translate(${this.x}px, ${this.y}px)`;
  }

  // Touches only: a mouse or a pen on the page acts as it always does.
  own(e) {
    if (e.pointerType !== 'touch') return false;
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  down(e) {
    if (!this.own(e)) return;
    if (!this.fingers.size) {
      this.most = 0;
      this.moved = 0;
      this.started = performance.now();
      if (this.started - this.lastTap < DRAG_MS) {
        this.dragging = true;
        this.button(BTN_LEFT, 1);
      }
    }
    this.fingers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    this.most = Math.max(this.most, this.fingers.size);
    this.deskEl.setPointerCapture?.(e.pointerId);
  }

  move(e) {
    if (!this.own(e)) return;
    const f = this.fingers.get(e.pointerId);
    if (!f) return;
    const dx = e.clientX - f.x;
    const dy = e.clientY - f.y;
    f.x = e.clientX;
    f.y = e.clientY;
    this.moved += Math.abs(dx) + Math.abs(dy);
    if (this.fingers.size >= 2) {
      // Two fingers scroll; the first of them speaks for both.
      if (e.pointerId !== this.fingers.keys().next().value || !this.over) return;
      const send = (axis, d) => {
        if (d) this.input.send('pointer_axis', { axis, value: Math.round(-d * 256), discrete: 0, source: 1 });
      };
      send(0, dy);
      send(1, dx);
      this.input.send('pointer_frame', {});
      return;
    }
    const r = this.deskEl.getBoundingClientRect();
    this.x = Math.max(r.left, Math.min(r.right - 1, this.x + dx * GAIN));
    this.y = Math.max(r.top, Math.min(r.bottom - 1, this.y + dy * GAIN));
    this.draw();
    this.point();
  }

  up(e) {
    if (!this.own(e)) return;
    if (!this.fingers.delete(e.pointerId) || this.fingers.size) return;
    const quick = performance.now() - this.started < TAP_MS && this.moved < TAP_MOVE;
    if (this.dragging) {
      this.dragging = false;
      this.button(BTN_LEFT, 0);
      this.lastTap = 0;
      return;
    }
    if (!quick || e.type === 'pointercancel') return;
    const b = this.most >= 2 ? BTN_RIGHT : BTN_LEFT;
    this.point();
    this.button(b, 1);
    this.button(b, 0);
    this.lastTap = b === BTN_LEFT ? performance.now() : 0;
  }

  get input() {
    return this.session.input;
  }

  // The pointer over the window under it, in that window's coordinates.
  point() {
    const top = document.elementFromPoint(this.x, this.y);
    const el = top && top.closest('.rcomp-window');
    const w = el && top.tagName === 'CANVAS' ? this.session.desk.windows.get(Number(el.dataset.window)) : null;
    if (this.over && this.over !== w) this.input.send('pointer_leave', { window: this.over.id });
    this.over = w;
    if (!w) return;
    const [x, y] = this.input.windowPoint(w, this.x, this.y);
    this.input.send('pointer_motion', { window: w.id, x, y });
    this.input.send('pointer_frame', {});
  }

  button(button, state) {
    const w = this.over;
    if (!w) return;
    if (state) {
      this.session.desk.focus(w);
      this.input.ime?.focus({ preventScroll: true });
    }
    this.input.send('pointer_button', { button, state });
    this.input.send('pointer_frame', {});
    if (state) this.input.markInput(w);
  }
}
