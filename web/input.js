// The user's input to the apps, as rcomp-view's input room sends it: keys
// by physical code and the modifiers, the pointer, the wheel by steps or
// smooth, touch, text from input methods (a hidden textarea's composition
// events, to the app's text input), pointer lock with relative motion, and
// the keyboard lock of fullscreen. Each press is marked, so that the frame
// that answers it measures input to photon.
import { CONSTRAINT, GESTURE, GRAB, STATES, TABLET, TEXT_INPUT } from './messages.js';
import { encoder } from './wire.js';
import { keyCode, modifierOf, modifiers, typedChar } from './keys.js';

const PINCH_END_MS = 200; // a trackpad's pinch has ended when its events stop this long
const MARKS = 16; // input marks remembered, as rcomp-view does
const BUTTONS = [0x110, 0x112, 0x111, 0x113, 0x114]; // BTN_LEFT, MIDDLE, RIGHT, SIDE, EXTRA

export class Input {
  // session: focused, windows, viewOnly, sendInput(name, values).
  constructor(session) {
    this.session = session;
    this.marks = new Array(MARKS).fill(0);
    this.mark = 0;
    this.mods = '';
    this.keysDown = new Map(); // by the event's code: {key} or, typed as a character, {key, cp}
    this.dead = new Set(); // dead keys: the browser composes, the next key's character goes
    this.physical = { depressed: 0, latched: 0, locked: 0, group: 0 }; // the keyboard's modifiers
    this.keysHeld = new Set(); // keys the menu or the phone's bar holds down
    this.added = 0; // the modifiers those are
    this.constraint = null; // {window, type}: what the app asked of the pointer
    this.keyboardLocked = false;
    this.textInput = new Map(); // by window: the app's text input state
    this.pressed = null; // {window, event}: the press an app may take for a move
    this.penIn = null; // {window, type, down}: the pen in proximity over a window
    this.pinching = null; // {scale, timer}: a trackpad's pinch under way
    this.ime = document.getElementById('rcomp-ime');
  }

  send(name, values) {
    this.session.sendInput(name, values);
  }

  listen() {
    document.addEventListener('keydown', (e) => this.key(e, 1), true);
    document.addEventListener('keyup', (e) => this.key(e, 0), true);
    window.addEventListener('blur', () => this.end());
    if (this.ime) {
      this.ime.addEventListener('compositionstart', () => { this.composing = true; });
      this.ime.addEventListener('compositionupdate', (e) => this.preedit(e.data || ''));
      this.ime.addEventListener('compositionend', (e) => {
        this.composing = false;
        this.commit(e.data || '');
      });
      // Text that came without keys (an on-screen keyboard, a paste of
      // text into an input method): to the app's text input, or typed.
      this.ime.addEventListener('input', (e) => {
        // (A key the page sent was prevented, and brings no input.)
        if (!e.isComposing && e.inputType === 'insertText' && e.data) this.commit(e.data);
        this.ime.value = '';
      });
    }
    document.addEventListener('pointerlockchange', () => this.lockChanged());
    // The user left the browser's fullscreen (Escape held, or the
    // browser's own way): the app's window leaves it too.
    document.addEventListener('fullscreenchange', () => {
      if (document.fullscreenElement) return;
      this.keyboardLocked = false;
      navigator.keyboard?.unlock?.();
      for (const w of this.session.windows.values()) {
        if (w.states & STATES.fullscreen) w.setFullscreen(false);
      }
    });
  }

  // The keyboard moved from one window to another.
  focusMoved(old, w) {
    if (old) {
      this.send('keyboard_leave', { window: old.id });
      this.keysDown.clear();
      this.keysHeld.clear(); // the server let every key go
      this.added = 0;
      this.session.keybar?.refresh();
    }
    this.send('keyboard_enter', { window: w.id, keys: new Uint8Array(0) });
    this.mods = '';
    if (this.ime && document.activeElement !== this.ime) this.ime.focus({ preventScroll: true });
  }

  key(e, state) {
    if (e.target && e.target.closest && e.target.closest('#rcomp-token, .rcomp-keep-keys')) return;
    const w = this.session.focused;
    if (!w || this.session.viewOnly) return;
    if (e.isComposing || e.keyCode === 229) return; // the input method's
    const code = keyCode(e.code);
    const id = e.code || 'key ' + e.key;
    const cp = state ? this.charOf(e) : 0;
    if (!code && !cp && !this.keysDown.has(id)) return;
    // Everything goes to the app, browser shortcuts included where the
    // browser lets a page keep them (all of them under keyboard lock).
    e.preventDefault();
    e.stopPropagation();
    if (state && e.key === 'Dead') {
      this.dead.add(id);
      return;
    }
    if (!state && this.dead.delete(id)) return;
    if (state && e.repeat) return; // the app repeats, as on Wayland
    if (state && this.keysDown.has(id)) return;
    const down = state ? { key: code, cp } : this.keysDown.get(id);
    if (!down) return;
    if (state) this.keysDown.set(id, down);
    else this.keysDown.delete(id);
    if (down.cp) this.send('key_char', { key: down.key, codepoint: down.cp, state });
    else this.send('key', { key: down.key, state });
    if (state) this.markInput(w);
    this.sendModifiers(e);
    // A key let go: what the phone's bar held for one key lets go too.
    if (!state && !modifierOf(down.key)) this.session.keybar?.typed();
  }

  // The character a key typed, where it goes as one: a server that takes
  // key_char (minor 8), and no game's pointer lock (a game wants its keys
  // where they are).
  charOf(e) {
    if (this.session.minor < 8 || document.pointerLockElement) return 0;
    return typedChar(e);
  }

  // The modifiers the app gets: the keyboard's (as the last key event
  // said) and those the menu's or the bar's keys hold.
  sendModifiers(e) {
    if (e) this.physical = modifiers(e);
    const m = { ...this.physical, depressed: this.physical.depressed | this.added };
    const k = `${m.depressed}/${m.locked}`;
    if (k === this.mods) return;
    this.mods = k;
    this.send('modifiers', m);
  }

  // Keys the page cannot take from the keyboard (the browser's or the
  // desktop's own: Ctrl+Alt+Del, Super, Ctrl+W, F11) or a phone lacks:
  // pressed in order, with the modifiers they make, until releaseKeys.
  pressKeys(codes) {
    const w = this.session.focused;
    if (!w || this.session.viewOnly || !codes) return;
    for (const code of codes) {
      if (this.keysHeld.has(code)) continue;
      this.keysHeld.add(code);
      this.send('key', { key: code, state: 1 });
      this.added |= modifierOf(code);
      this.sendModifiers();
    }
    this.markInput(w);
  }

  releaseKeys(codes) {
    if (!codes) return;
    for (const code of [...codes].reverse()) {
      if (!this.keysHeld.delete(code)) continue;
      this.send('key', { key: code, state: 0 });
      this.added &= ~modifierOf(code);
      this.sendModifiers();
    }
  }

  markInput(w) {
    this.mark = (this.mark + 1) >>> 0 || 1;
    this.marks[this.mark % MARKS] = performance.now();
    this.send('input_mark', { window: w.id, mark: this.mark });
  }

  // When the input the server marked was sent, or 0 if long forgotten.
  markedAt(mark) {
    return this.marks[mark % MARKS];
  }

  // Keys still down go up when the page loses the keyboard.
  end() {
    if (this.session.focused && this.keysDown.size) {
      for (const d of this.keysDown.values()) {
        if (d.cp) this.send('key_char', { key: d.key, codepoint: d.cp, state: 0 });
        else this.send('key', { key: d.key, state: 0 });
      }
    }
    this.keysDown.clear();
    this.dead.clear();
    this.releaseKeys([...this.keysHeld]);
    this.mods = '';
  }

  // A point of the page in a window's coordinates (24.8), whatever the
  // window's zoom.
  windowPoint(w, clientX, clientY) {
    const r = w.canvas.getBoundingClientRect();
    const sx = r.width ? (w.width / w.scale) / r.width : 1;
    const sy = r.height ? (w.height / w.scale) / r.height : 1;
    return [Math.round((clientX - r.left) * sx * 256), Math.round((clientY - r.top) * sy * 256)];
  }

  // How a finger acts: 'direct' (a touch where it is) or 'touchpad'
  // (touchpad.js moves a pointer).
  setTouchMode(mode) {
    this.touchMode = mode;
    this.session.touchpad?.enable(mode === 'touchpad');
  }

  // A pen (Pointer Events of type pen) is a tablet's tool to a server of
  // minor 10 or later: its place, pressure, tilt and twist, its tip and
  // barrel buttons, its coming and going; the eraser end is an eraser.
  // An older server gets it as the pointer. Whether e was taken so.
  pen(w, e) {
    if (e.pointerType !== 'pen' || this.session.minor < 10) return false;
    const T = TABLET;
    const eraser = e.button === 5 || (e.buttons & 32) !== 0;
    const type = eraser ? T.eraser : T.pen;
    const [x, y] = this.windowPoint(w, e.clientX, e.clientY);
    const frame = (changed, button = 0, state = 0) => {
      const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
      this.send('tablet', {
        window: this.penIn.window,
        tool_type: this.penIn.type,
        capabilities: T.hasPressure | T.hasTilt | T.hasRotation,
        serial: 0,
        changed,
        x, y,
        pressure: Math.round(clamp(e.pressure || 0, 0, 1) * 65535),
        distance: 0,
        tilt_x: Math.round(clamp(e.tiltX || 0, -90, 90) * 256),
        tilt_y: Math.round(clamp(e.tiltY || 0, -90, 90) * 256),
        rotation: Math.round(((((e.twist || 0) % 360) + 360) % 360) * 256),
        slider: 0, wheel: 0, wheel_clicks: 0, button, button_state: state,
      });
    };
    const axes = T.motion | T.pressure | T.tilt | T.rotation;
    const leaving = e.type === 'pointerleave' || e.type === 'pointercancel';
    if (this.penIn && (this.penIn.window !== w.id || this.penIn.type !== type)) {
      frame(T.out);
      this.penIn = null;
    }
    if (leaving) {
      if (this.penIn && !e.buttons) {
        frame((this.penIn.down ? T.up : 0) | T.out);
        this.penIn = null;
      }
      return true;
    }
    let changed = axes;
    if (!this.penIn) {
      this.penIn = { window: w.id, type, down: false };
      changed |= T.in;
    }
    // The tip (the eraser's too) is the tip; the barrel's buttons are the
    // stylus buttons.
    const BARREL = { 1: 0x14c, 2: 0x14b };
    if (e.type === 'pointerdown' || e.type === 'pointerup') {
      const pressed = e.type === 'pointerdown';
      if (e.button === 0 || e.button === 5) {
        changed |= pressed ? T.down : T.up;
        this.penIn.down = pressed;
        frame(changed);
      } else if (BARREL[e.button]) {
        frame(changed | T.button, BARREL[e.button], pressed ? 1 : 0);
      } else {
        frame(changed);
      }
      if (pressed) this.markInput(w);
      return true;
    }
    frame(changed);
    return true;
  }

  // The pointer, the wheel and touch on a window's canvas.
  attach(w) {
    const c = w.canvas;
    const pos = (e) => this.windowPoint(w, e.clientX, e.clientY);
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('pointermove', (e) => {
      if (this.session.viewOnly) return;
      const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [e];
      if (document.pointerLockElement === c) {
        for (const ev of events.length ? events : [e]) {
          const dx = Math.round(ev.movementX * 256);
          const dy = Math.round(ev.movementY * 256);
          this.send('relative_motion', {
            time_us: ev.timeStamp * 1000, dx, dy, dx_unaccel: dx, dy_unaccel: dy,
          });
        }
        this.send('pointer_frame', {});
        return;
      }
      if (this.pen(w, e)) return;
      const [x, y] = pos(e);
      if (e.pointerType === 'touch') {
        this.send('touch_motion', { id: e.pointerId, x, y });
        this.send('touch_frame', {});
        return;
      }
      this.send('pointer_motion', { window: w.id, x, y });
      this.send('pointer_frame', {});
    });
    c.addEventListener('pointerdown', (e) => {
      if (this.session.viewOnly) return;
      e.preventDefault();
      this.session.clipboard.check();
      this.ime?.focus({ preventScroll: true });
      if (this.constraint && this.constraint.window === w && this.constraint.type === CONSTRAINT.lock &&
        document.pointerLockElement !== c) {
        // A browser locks only on a gesture; it may still refuse.
        Promise.resolve(c.requestPointerLock?.())
          .catch((err) => console.log('pointer lock refused: ' + err.message));
      }
      if (e.pointerType === 'pen' && this.session.minor >= 10) {
        c.setPointerCapture(e.pointerId);
        this.pen(w, e);
        return;
      }
      const [x, y] = pos(e);
      if (e.pointerType === 'touch') {
        c.setPointerCapture(e.pointerId);
        this.send('touch_down', { window: w.id, id: e.pointerId, x, y });
        this.send('touch_frame', {});
        this.markInput(w);
        return;
      }
      if (document.pointerLockElement !== c) {
        c.setPointerCapture(e.pointerId);
        this.send('pointer_motion', { window: w.id, x, y });
      }
      this.send('pointer_button', { button: BUTTONS[e.button] || 0x110, state: 1 });
      this.send('pointer_frame', {});
      this.markInput(w);
      this.pressed = { window: w, event: e };
    });
    const up = (e) => {
      // A mouse's back and forward buttons are the app's, not the
      // browser's history, which goes back on their release unless told.
      if (e.button > 2) e.preventDefault();
      if (this.session.viewOnly) return;
      if (this.pen(w, e)) return;
      if (e.pointerType === 'touch') {
        this.send(e.type === 'pointercancel' ? 'touch_cancel' : 'touch_up',
          e.type === 'pointercancel' ? {} : { id: e.pointerId });
        this.send('touch_frame', {});
        return;
      }
      if (e.type === 'pointercancel' && !this.pressed) return;
      this.send('pointer_button', { button: BUTTONS[e.button] || 0x110, state: 0 });
      this.send('pointer_frame', {});
      this.pressed = null;
    };
    c.addEventListener('pointerup', up);
    c.addEventListener('pointercancel', up);
    c.addEventListener('pointerleave', (e) => {
      if (!this.session.viewOnly && this.pen(w, e)) return;
      if (e.pointerType !== 'touch' && !e.buttons && document.pointerLockElement !== c) {
        this.send('pointer_leave', { window: w.id });
      }
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      if (this.session.viewOnly) return;
      if (this.pinch(w, e)) return;
      const axes = [[0, e.deltaY, e.wheelDeltaY], [1, e.deltaX, e.wheelDeltaX]];
      for (const [axis, delta, wheelDelta] of axes) {
        if (!delta) continue;
        let value;
        let discrete = 0;
        let source = 2; // continuous: a touchpad's or a smooth wheel's pixels
        if (e.deltaMode === 1 || e.deltaMode === 2) {
          discrete = Math.sign(delta) * Math.max(1, Math.round(Math.abs(delta) / 3));
          value = discrete * 15;
          source = 0;
        } else if (wheelDelta && wheelDelta % 120 === 0) {
          discrete = -wheelDelta / 120; // a wheel's steps
          value = discrete * 15;
          source = 0;
        } else {
          value = delta;
        }
        this.send('pointer_axis', { axis, value: Math.round(value * 256), discrete, source });
      }
      this.send('pointer_frame', {});
    }, { passive: false });
  }

  // A trackpad's pinch, which browsers report as wheel events with Ctrl
  // held, as they report Ctrl and a mouse's wheel: only a pinch's deltas
  // are fractional pixels. To a server of minor 9 or later it is a pinch
  // gesture (the app under the pointer zooms as on the desktop), begun at
  // its first event and ended PINCH_END_MS after its last; Ctrl and a
  // wheel stay Ctrl and a wheel. Whether e was taken so.
  pinch(w, e) {
    const fractional = e.deltaMode === 0 && !Number.isInteger(e.deltaY);
    if (!e.ctrlKey || this.session.minor < 9 || !(fractional || this.pinching)) return false;
    const send = (phase, fields) => this.send('gesture', {
      kind: GESTURE.pinch, phase, fingers: 0, cancelled: 0, dx: 0, dy: 0, scale: 0, rotation: 0,
      ...fields,
    });
    if (!this.pinching) {
      this.pinching = { scale: 1, timer: 0 };
      // Over the window where it begins: the app under the pointer gets it.
      const [x, y] = this.windowPoint(w, e.clientX, e.clientY);
      this.send('pointer_motion', { window: w.id, x, y });
      this.send('pointer_frame', {});
      send(GESTURE.begin, { fingers: 2 });
    }
    // Chrome's delta is -100 ln(the scale's step): a step of 1.1 is -9.53.
    this.pinching.scale = Math.min(32767, this.pinching.scale * Math.exp(-e.deltaY / 100));
    send(GESTURE.update, { scale: Math.round(this.pinching.scale * 65536) });
    clearTimeout(this.pinching.timer);
    this.pinching.timer = setTimeout(() => {
      this.pinching = null;
      send(GESTURE.end, {});
    }, PINCH_END_MS);
    return true;
  }

  // A client-decorated app asked to be moved or resized with the press
  // the page still holds: the page does it, as a desktop would.
  grab(w, m) {
    if (!this.pressed || this.pressed.window !== w || m.kind === GRAB.menu) return;
    w.grab(m.kind, m.edges, this.pressed.event);
  }

  // The app went fullscreen: the page fills the screen, with the keyboard
  // locked to it (Escape held leaves), where the browser allows: within a
  // few seconds of the user's last click or key, as when the app went
  // fullscreen for a key the user pressed.
  fullscreen() {
    document.documentElement.requestFullscreen?.()
      .then(() => navigator.keyboard?.lock?.())
      .then(() => { this.keyboardLocked = Boolean(document.fullscreenElement); })
      .catch((e) => console.log('fullscreen in the page only: ' + e.message));
  }

  // The app asked to lock the pointer: the page locks it at the next click
  // in that window (a browser locks only on a user's gesture) and says so.
  // A browser cannot confine the pointer to a region: for a confinement
  // the pointer stays free and the app is never told it is confined.
  setConstraint(w, m) {
    if (m.type === CONSTRAINT.none) {
      if (this.constraint && this.constraint.window === w) {
        this.constraint = null;
        if (document.pointerLockElement) document.exitPointerLock();
      }
      return;
    }
    this.constraint = { window: w, type: m.type };
  }

  lockChanged() {
    const locked = document.pointerLockElement;
    const c = this.constraint;
    if (!c) return;
    const active = locked === c.window.canvas ? 1 : 0;
    this.send('pointer_constraint_state', { window: c.window.id, active });
  }

  // What the app's text input wants (text_input).
  textInputState(m) {
    this.textInput.set(m.window, m);
  }

  // Text from the browser's input method, to the app's text input.
  preedit(text) {
    const w = this.session.focused;
    const ti = w && this.textInput.get(w.id);
    if (!ti || !(ti.flags & TEXT_INPUT.enabled)) return;
    const bytes = encoder.encode(text).length;
    this.send('text_input_event', {
      window: w.id, flags: TEXT_INPUT.preedit, preedit_cursor_begin: bytes,
      preedit_cursor_end: bytes, delete_before: 0, delete_after: 0, preedit: text, commit: '',
    });
  }

  // Text committed (an input method, an on-screen keyboard): to the app's
  // text input where it has one, else typed, character by character.
  commit(text) {
    const w = this.session.focused;
    if (!w || !text || this.session.viewOnly) return;
    const ti = this.textInput.get(w.id);
    // With Ctrl, Alt or Super held (the phone's bar) text is keys: Ctrl+C.
    const shortcut = (this.physical.depressed | this.added) & (4 | 8 | 64);
    if (ti && ti.flags & TEXT_INPUT.enabled && !shortcut) {
      this.send('text_input_event', {
        window: w.id, flags: 0, preedit_cursor_begin: 0, preedit_cursor_end: 0,
        delete_before: 0, delete_after: 0, preedit: '', commit: text,
      });
    } else {
      this.typeText(text);
    }
    this.markInput(w);
  }

  // Text as keys: each character pressed and released as itself
  // (key_char), a line's end as Enter and a tab as Tab.
  typeText(text) {
    for (const ch of text) {
      const physical = { '\n': 28, '\r': 28, '\t': 15 }[ch];
      if (physical) {
        this.send('key', { key: physical, state: 1 });
        this.send('key', { key: physical, state: 0 });
        this.session.keybar?.typed();
        continue;
      }
      const cp = ch.codePointAt(0);
      if (this.session.minor < 8 || cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0)) continue;
      this.send('key_char', { key: 0, codepoint: cp, state: 1 });
      this.send('key_char', { key: 0, codepoint: cp, state: 0 });
      this.session.keybar?.typed();
    }
  }
}
