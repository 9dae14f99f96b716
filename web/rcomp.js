// The browser viewer: one WebSocket to rcomp-run carrying the wire protocol
// as rcomp-view speaks it (protocol/PROTOCOL.md), each remote toplevel a
// window in the page. The messages' layout comes from messages.js, which
// the build generates from protocol/messages.h.
import { BYE, CAPS, CONSTRAINT, FRAME, GRAB, HELLO, MAGIC, RECORD, REQUEST, SELECTION, STATES,
  TEXT_INPUT, TRANSFER, VERSION_MAJOR, VERSION_MINOR, VIEWERS } from './messages.js';
import { Reader, decoder, encode, encoder, inRecords, mimeList, parseMimeList } from './wire.js';
import { keyCode, layoutNames, modifiers } from './keys.js';
import { RemoteWindow, placePopup } from './window.js';
import { VideoStream } from './video.js';
import { Sound } from './sound.js';

const LINK_ACK_EVERY = 1024; // record bytes read between two link_acks
const MARKS = 16; // input marks remembered, as rcomp-view does
const TEXT_TYPES = ['text/plain;charset=utf-8', 'UTF8_STRING', 'text/plain', 'STRING', 'TEXT'];
const BUTTONS = [0x110, 0x112, 0x111, 0x113, 0x114]; // BTN_LEFT, MIDDLE, RIGHT, SIDE, EXTRA
const RETRY_MS = [250, 500, 1000, 2000, 4000];

function params() {
  const p = new URLSearchParams(location.hash.slice(1));
  return {
    token: p.get('token') || '',
    share: p.get('share') === '1',
    viewOnly: p.get('view-only') === '1',
    layout: p.get('layout') || '',
    variant: p.get('variant') || '',
    options: p.get('options') || '',
    hud: p.get('hud') === '1',
    sound: p.get('sound') !== '0',
  };
}

class Session {
  constructor(desk, list) {
    this.desk = desk;
    this.list = list;
    this.windows = new Map();
    this.z = 1;
    this.placed = 0;
    this.focused = null;
    this.marks = new Array(MARKS).fill(0);
    this.mark = 0;
    this.mods = '';
    this.keysDown = new Set();
    this.hudOn = false;
    this.bytes = 0;
    this.retries = 0;
    this.clip = { ours: null, theirs: null, id: 1, reads: new Map(), writes: new Map() };
    this.cursor = 'default';
    this.constraint = null;
    this.keyboardLocked = false;
    this.textInput = new Map();
    this.ime = document.getElementById('rcomp-ime');
  }

  start() {
    const p = params();
    this.p = p;
    this.hudOn = p.hud;
    this.input();
    if (!p.token) {
      this.askToken();
      return;
    }
    this.connect();
  }

  // No token in the address: the page asks for it, and keeps it only in
  // the fragment, which no request carries.
  askToken() {
    const form = document.createElement('form');
    form.id = 'rcomp-token';
    form.innerHTML = '<label>session token <input type="password" autocomplete="off"></label> ' +
      '<button>connect</button>';
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const v = form.querySelector('input').value.trim();
      if (!v) return;
      const h = new URLSearchParams(location.hash.slice(1));
      h.set('token', v);
      history.replaceState(null, '', '#' + h.toString());
      form.remove();
      this.p.token = v;
      this.connect();
    });
    document.body.append(form);
    form.querySelector('input').focus();
  }

  connect() {
    const p = this.p;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/`, 'rcomp');
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.out = [];
    this.held = []; // input before session_viewers
    this.viewers = null;
    this.first = new Reader();
    this.welcomed = false;
    this.classes = Array.from({ length: 6 }, () => new Reader());
    this.pending = new Uint8Array(0); // record bytes not yet a whole record
    this.received = 0;
    this.acked = 0;
    this.synced = false;
    for (const w of this.windows.values()) w.stale = true;
    ws.onopen = () => {
      let flags = 0;
      if (p.share) flags |= HELLO.share;
      if (p.viewOnly) flags |= HELLO.viewOnly | HELLO.share;
      let caps = CAPS.lz4 | CAPS.replace | CAPS.copyRect | CAPS.serverDecorations;
      if (typeof VideoDecoder !== 'undefined') caps |= CAPS.h264;
      if (p.sound && Sound.available()) caps |= CAPS.audio;
      ws.send(encode('hello', {
        magic: MAGIC, major: VERSION_MAJOR, minor: VERSION_MINOR, caps, flags, token: p.token,
      }));
      this.status('connecting');
    };
    ws.onmessage = (e) => {
      if (ws !== this.ws) return;
      try {
        this.read(new Uint8Array(e.data));
      } catch (err) {
        this.error('protocol error: ' + err.message);
        this.ended = true;
        ws.close();
      }
    };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      this.lost();
    };
  }

  // The link broke without a goodbye: connect again, and get the session
  // back in the same windows (the snapshot names them again).
  lost() {
    this.endInput();
    if (this.sound) this.sound.stop();
    if (this.ended) return;
    if (this.retries === 0 && !this.everWelcomed) {
      this.error('cannot reach rcomp-run at ' + location.host);
    }
    const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries++;
    this.status(`the link broke; connecting again in ${(wait / 1000).toFixed(1)} s`);
    setTimeout(() => this.connect(), wait);
  }

  read(bytes) {
    this.bytes += bytes.length;
    if (!this.welcomed) {
      this.first.push(bytes);
      const m = this.first.next();
      if (!m) return;
      this.welcomed = true;
      const rest = this.first.rest();
      this.handle(m);
      if (rest.length) this.records(rest);
      return;
    }
    this.records(bytes);
  }

  records(bytes) {
    const b = new Uint8Array(this.pending.length + bytes.length);
    b.set(this.pending);
    b.set(bytes, this.pending.length);
    let o = 0;
    while (b.length - o >= RECORD.header) {
      const cls = b[o];
      const len = b[o + 2] | (b[o + 3] << 8);
      if (cls >= 6 || b[o + 1] !== 0 || len < 1 || len > RECORD.max) throw new Error('bad record');
      if (b.length - o < RECORD.header + len) break;
      const reader = this.classes[cls];
      reader.push(b.subarray(o + RECORD.header, o + RECORD.header + len));
      o += RECORD.header + len;
      this.received += RECORD.header + len;
      for (let m = reader.next(); m; m = reader.next()) this.handle(m);
    }
    this.pending = b.slice(o);
    if (this.received - this.acked >= LINK_ACK_EVERY) {
      this.acked = this.received;
      this.send('link_ack', { received: this.received }, RECORD.link);
    }
  }

  // Messages sent in one turn of the page go in one WebSocket message, as
  // rcomp-view writes what one event makes at once: a press and its
  // input_mark reach rcomp-run in one read, before the app can answer.
  send(name, values, cls = RECORD.control) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.welcomed) return;
    this.out.push(inRecords(cls, encode(name, values)));
    if (this.out.length === 1) queueMicrotask(() => this.flush());
  }

  flush() {
    const parts = this.out;
    this.out = [];
    if (!parts.length || !this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    this.ws.send(all);
  }

  // Input goes only from a viewer that may give it.
  // Until the session says whether this viewer only watches (after the
  // snapshot), input waits; a watcher's never goes.
  sendInput(name, values) {
    if (this.p.viewOnly || this.watching) return;
    if (!this.viewers) {
      this.held.push([name, values]);
      return;
    }
    this.send(name, values);
  }

  handle(m) {
    const w = m.window !== undefined ? this.windows.get(m.window) : undefined;
    switch (m.message) {
      case 'welcome':
        this.welcomed = true;
        this.everWelcomed = true;
        this.retries = 0;
        this.status('session ' + m.name);
        document.getElementById('rcomp-error')?.remove();
        this.welcome();
        break;
      case 'goodbye':
        this.ended = true;
        this.error(m.text || (m.reason === BYE.unauthorized ? 'wrong token'
          : 'the session said goodbye'));
        break;
      case 'sync':
        this.synced = true;
        for (const [id, old] of this.windows) {
          if (old.stale) this.destroy(id);
        }
        break;
      case 'window_new':
        this.windowNew(m, null);
        break;
      case 'popup_new':
        this.windowNew(m, m);
        break;
      case 'window_title':
        if (w) w.setTitle(m.text);
        break;
      case 'window_app_id':
        if (w) w.el.dataset.appId = m.text;
        break;
      case 'window_destroy':
        this.destroy(m.window);
        break;
      case 'window_scale':
        if (w) w.setScale(m.scale);
        break;
      case 'window_hints':
        if (w) w.hints = [m.min_width, m.min_height, m.max_width, m.max_height];
        break;
      case 'window_request':
        if (w) this.request(w, m.request);
        break;
      case 'window_grab':
        if (w && this.pressed && this.pressed.window === w) {
          if (m.kind !== GRAB.menu) w.grab(m.kind, m.edges, this.pressed.event);
        }
        break;
      case 'window_parent':
      case 'window_decoration':
      case 'host_name':
        break;
      case 'frame':
        this.frame(m);
        break;
      case 'copy_rect':
        if (w) w.copyRect(m);
        break;
      case 'frame_mark':
        if (w) w.pendingMark = m.mark;
        break;
      case 'cursor':
        this.setCursor(m);
        break;
      case 'window_stats':
        if (w) this.windowStats(w, m);
        break;
      case 'session_viewers':
        this.viewers = m;
        // Admitted with the watch token: it sends no input at all.
        this.watching = (m.flags & VIEWERS.watching) !== 0;
        for (const [name, values] of this.held.splice(0)) this.sendInput(name, values);
        this.status(`session: ${m.count} viewer${m.count > 1 ? 's' : ''}` +
          ((m.flags & VIEWERS.watching) ? ', watching only' : '') +
          ((m.flags & VIEWERS.input) ? '' : ', input elsewhere'));
        break;
      case 'pointer_constraint':
        if (w) this.setConstraint(w, m);
        break;
      case 'text_input':
        this.textInput.set(m.window, m);
        break;
      case 'selection':
        this.remoteSelection(m);
        break;
      case 'transfer_request':
        this.transferRequest(m);
        break;
      case 'transfer_data':
        this.transferData(m);
        break;
      case 'transfer_ack':
        this.transferAck(m);
        break;
      case 'audio':
      case 'audio_end':
        if (this.sound) this.sound.message(m);
        break;
      default:
        break; // nothing the page shows
    }
  }

  async welcome() {
    if (this.hudOn) this.send('stats_wanted', { on: 1 });
    if (this.p.sound && Sound.available()) {
      if (!this.sound) this.sound = new Sound((n, v) => this.send(n, v));
      this.sound.start();
    }
    if (!this.p.viewOnly) {
      const names = await layoutNames(this.p);
      this.send('keymap', { format: 2, data: names });
      this.clipboardCheck();
    }
  }

  // --- windows

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
    this.desk.append(w.el);
    w.el.style.zIndex = this.z++;
    if (popup) {
      this.placePopup(w);
    } else {
      w.place(16 + 24 * this.placed, 16 + 24 * this.placed);
      this.placed = (this.placed + 1) % 10;
      this.addToList(w);
      this.focus(w);
    }
    this.canvasInput(w);
    w.showHud(this.hudOn);
    this.sendOutput(w);
  }

  sendOutput(w) {
    const scale = Math.max(1, Math.min(4, Math.round(window.devicePixelRatio || 1)));
    this.send('output_info', { window: w.id, refresh_mhz: 60000, scale });
  }

  destroy(id) {
    const w = this.windows.get(id);
    if (!w) return;
    w.remove();
    this.windows.delete(id);
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
    const dr = this.desk.getBoundingClientRect();
    const px = pr.left - dr.left;
    const py = pr.top - dr.top;
    const bounds = { x: -px, y: -py, width: dr.width, height: dr.height };
    const [x, y] = placePopup(w.popup, bounds);
    w.offset = [x, y];
    w.place(px + x, py + y);
    w.el.style.zIndex = this.z++;
  }

  // A window moved or changed size: its popups follow.
  moved(w) {
    for (const c of this.windows.values()) {
      if (c.popup && c.parent === w.id) this.placePopup(c);
    }
  }

  bounds() {
    const r = this.desk.getBoundingClientRect();
    return { width: r.width, height: r.height };
  }

  focus(w) {
    if (w.popup) return;
    w.el.style.zIndex = this.z++;
    this.moved(w);
    if (w.minimized) this.unminimize(w);
    if (this.focused === w) return;
    const old = this.focused;
    this.focused = w;
    if (old) {
      old.setActivated(false);
      this.sendInput('keyboard_leave', { window: old.id });
      this.keysDown.clear();
    }
    w.setActivated(true);
    for (const o of this.windows.values()) o.listButton?.classList.toggle('rcomp-on', o === w);
    this.sendInput('keyboard_enter', { window: w.id, keys: new Uint8Array(0) });
    this.mods = '';
    if (this.ime && document.activeElement !== this.ime) this.ime.focus({ preventScroll: true });
    this.clipboardCheck();
  }

  request(w, r) {
    switch (r) {
      case REQUEST.maximize: w.setMaximized(true); break;
      case REQUEST.unmaximize: w.setMaximized(false); break;
      case REQUEST.fullscreen:
        // The window fills the page; the page fills the screen, with the
        // keyboard locked to it (Escape held leaves), where the browser
        // allows: within a few seconds of the user's last click or key,
        // as when the app went fullscreen for a key the user pressed.
        w.setFullscreen(true);
        document.documentElement.requestFullscreen?.()
          .then(() => navigator.keyboard?.lock?.())
          .then(() => { this.keyboardLocked = Boolean(document.fullscreenElement); })
          .catch((e) => console.log('fullscreen in the page only: ' + e.message));
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
  }

  unminimize(w) {
    w.minimized = false;
    w.el.style.display = '';
    w.listButton?.classList.remove('rcomp-minimized');
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

  // --- pictures

  frame(m) {
    const w = this.windows.get(m.window);
    if (!w) return;
    if (m.codec === FRAME.codecXor) {
      if (w.stream) {
        w.stream.close();
        w.stream = null;
      }
      w.dropVideoFrame();
      w.lossless(m);
      this.presented(w, m.seq);
      return;
    }
    if (m.codec !== FRAME.codecH264) throw new Error('a frame of an unknown codec');
    if (!w.stream) {
      if (!(m.flags & FRAME.reset)) throw new Error('video that does not start with reset');
      w.stream = new VideoStream((frame, seq) => {
        if (this.windows.get(w.id) !== w || !w.stream) {
          frame.close();
          return;
        }
        // Drawn as it comes, as rcomp-view commits it: the browser shows
        // the newest at its next frame. Newest wins where pictures wait:
        // those decoded in one burst (a starved page) are drawn once, and
        // a hidden page draws and acks nothing until it is shown again,
        // as a hidden Wayland window gets no frame callbacks.
        w.dropVideoFrame();
        w.nextFrame = { frame, seq, size: w.videoSize, codec: w.stream.codec };
        if (!w.paintQueued && !document.hidden) {
          w.paintQueued = true;
          setTimeout(() => this.paintVideo(w), 0);
        }
      }, (e) => {
        this.error('video: ' + e.message);
        this.ws.close();
      });
    }
    w.videoSize = [m.width, m.height];
    w.stream.decode(m.payload, m.seq, (m.flags & FRAME.reset) !== 0);
  }

  paintVideo(w) {
    const next = w.nextFrame;
    w.paintQueued = false;
    if (!next || document.hidden) return;
    w.nextFrame = null;
    if (this.windows.get(w.id) === w && w.stream) {
      w.video(next.frame, next.size[0], next.size[1]);
      w.codec = 'H.264 ' + next.codec;
      this.presented(w, next.seq);
    }
    next.frame.close();
  }

  presented(w, seq) {
    w.presented++;
    if (!this.firstFrameMs) this.firstFrameMs = performance.now(); // from the page's start
    if (w.pendingMark) {
      const sent = this.marks[w.pendingMark % MARKS];
      if (sent) {
        w.photon.push(performance.now() - sent);
        if (w.photon.length > 64) w.photon.shift();
      }
      w.pendingMark = 0;
    }
    this.send('frame_ack', { window: w.id, seq, recv_time_us: performance.now() * 1000 });
  }

  setCursor(m) {
    if (m.width === 0 || m.height === 0) {
      this.cursor = 'none';
    } else {
      const c = document.createElement('canvas');
      c.width = m.width;
      c.height = m.height;
      const ctx = c.getContext('2d');
      const img = ctx.createImageData(m.width, m.height);
      for (let p = 0; p < m.pixels.length; p += 4) {
        const a = m.pixels[p + 3];
        const k = a ? 255 / a : 0;
        img.data[p] = Math.min(255, Math.round(m.pixels[p + 2] * k));
        img.data[p + 1] = Math.min(255, Math.round(m.pixels[p + 1] * k));
        img.data[p + 2] = Math.min(255, Math.round(m.pixels[p] * k));
        img.data[p + 3] = a;
      }
      ctx.putImageData(img, 0, 0);
      let url = c.toDataURL('image/png');
      let hx = m.hotspot_x;
      let hy = m.hotspot_y;
      if (m.scale > 1) {
        const s = document.createElement('canvas');
        s.width = Math.max(1, Math.round(m.width / m.scale));
        s.height = Math.max(1, Math.round(m.height / m.scale));
        s.getContext('2d').drawImage(c, 0, 0, s.width, s.height);
        url = s.toDataURL('image/png');
        hx = Math.round(hx / m.scale);
        hy = Math.round(hy / m.scale);
      }
      this.cursor = `url(${url}) ${Math.max(0, hx)} ${Math.max(0, hy)}, default`;
    }
    this.desk.style.setProperty('--rcomp-cursor', this.cursor);
  }

  // --- input

  input() {
    document.addEventListener('keydown', (e) => this.key(e, 1), true);
    document.addEventListener('keyup', (e) => this.key(e, 0), true);
    window.addEventListener('blur', () => this.endInput());
    if (this.ime) {
      this.ime.addEventListener('compositionstart', () => { this.composing = true; });
      this.ime.addEventListener('compositionupdate', (e) => this.preedit(e.data || ''));
      this.ime.addEventListener('compositionend', (e) => {
        this.composing = false;
        this.commit(e.data || '');
      });
      // Text that came without keys (an on-screen keyboard, a paste of
      // text into an input method): to the app's text input, if it has one.
      this.ime.addEventListener('input', (e) => {
        if (!e.isComposing && e.inputType === 'insertText' && e.data && !this.typedByKey) {
          this.commit(e.data);
        }
        this.typedByKey = false;
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
      for (const w of this.windows.values()) {
        if (w.states & STATES.fullscreen) w.setFullscreen(false);
      }
    });
    document.addEventListener('pointerdown', (e) => this.dismissPopups(e), true);
    window.addEventListener('focus', () => this.clipboardCheck());
    document.addEventListener('visibilitychange', () => {
      this.clipboardCheck();
      for (const w of this.windows.values()) this.paintVideo(w);
    });
    document.addEventListener('copy', () => setTimeout(() => this.clipboardCheck(), 0));
    document.addEventListener('keydown', (e) => {
      if (e.ctrlKey && e.altKey && e.shiftKey && e.code === 'KeyH') this.toggleHud();
    });
    document.getElementById('rcomp-hud-toggle')?.addEventListener('click', () => this.toggleHud());
  }

  key(e, state) {
    if (e.target && e.target.closest && e.target.closest('#rcomp-token')) return;
    const w = this.focused;
    if (!w || this.p.viewOnly) return;
    if (e.isComposing || e.keyCode === 229) return; // the input method's
    const code = keyCode(e.code);
    if (!code) return;
    // Everything goes to the app, browser shortcuts included where the
    // browser lets a page keep them (all of them under keyboard lock).
    e.preventDefault();
    e.stopPropagation();
    if (state && e.repeat) return; // the app repeats, as on Wayland
    if (state && this.keysDown.has(code)) return;
    if (state) this.keysDown.add(code);
    else if (!this.keysDown.delete(code)) return;
    this.typedByKey = state === 1;
    this.sendInput('key', { key: code, state });
    if (state) this.markInput(w);
    this.sendModifiers(e);
  }

  sendModifiers(e) {
    const m = modifiers(e);
    const k = `${m.depressed}/${m.locked}`;
    if (k === this.mods) return;
    this.mods = k;
    this.sendInput('modifiers', m);
  }

  markInput(w) {
    this.mark = (this.mark + 1) >>> 0 || 1;
    this.marks[this.mark % MARKS] = performance.now();
    this.sendInput('input_mark', { window: w.id, mark: this.mark });
  }

  // Keys still down go up when the page loses the keyboard.
  endInput() {
    if (this.focused && this.keysDown.size) {
      for (const k of this.keysDown) this.sendInput('key', { key: k, state: 0 });
    }
    this.keysDown.clear();
    this.mods = '';
  }

  canvasInput(w) {
    const c = w.canvas;
    const pos = (e) => {
      const r = c.getBoundingClientRect();
      const sx = r.width ? (w.width / w.scale) / r.width : 1;
      const sy = r.height ? (w.height / w.scale) / r.height : 1;
      return [Math.round((e.clientX - r.left) * sx * 256), Math.round((e.clientY - r.top) * sy * 256)];
    };
    c.addEventListener('contextmenu', (e) => e.preventDefault());

    c.addEventListener('pointermove', (e) => {
      if (this.p.viewOnly) return;
      const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [e];
      if (document.pointerLockElement === c) {
        for (const ev of events.length ? events : [e]) {
          const dx = Math.round(ev.movementX * 256);
          const dy = Math.round(ev.movementY * 256);
          this.sendInput('relative_motion', {
            time_us: ev.timeStamp * 1000, dx, dy, dx_unaccel: dx, dy_unaccel: dy,
          });
        }
        this.sendInput('pointer_frame', {});
        return;
      }
      const [x, y] = pos(e);
      if (e.pointerType === 'touch') {
        this.sendInput('touch_motion', { id: e.pointerId, x, y });
        this.sendInput('touch_frame', {});
        return;
      }
      this.sendInput('pointer_motion', { window: w.id, x, y });
      this.sendInput('pointer_frame', {});
    });
    c.addEventListener('pointerdown', (e) => {
      if (this.p.viewOnly) return;
      e.preventDefault();
      this.clipboardCheck();
      this.ime?.focus({ preventScroll: true });
      if (this.constraint && this.constraint.window === w && this.constraint.type === CONSTRAINT.lock &&
        document.pointerLockElement !== c) {
        // A browser locks only on a gesture; it may still refuse.
        Promise.resolve(c.requestPointerLock?.())
          .catch((e) => console.log('pointer lock refused: ' + e.message));
      }
      const [x, y] = pos(e);
      if (e.pointerType === 'touch') {
        c.setPointerCapture(e.pointerId);
        this.sendInput('touch_down', { window: w.id, id: e.pointerId, x, y });
        this.sendInput('touch_frame', {});
        this.markInput(w);
        return;
      }
      if (document.pointerLockElement !== c) {
        c.setPointerCapture(e.pointerId);
        this.sendInput('pointer_motion', { window: w.id, x, y });
      }
      this.sendInput('pointer_button', { button: BUTTONS[e.button] || 0x110, state: 1 });
      this.sendInput('pointer_frame', {});
      this.markInput(w);
      this.pressed = { window: w, event: e };
    });
    const up = (e) => {
      // A mouse's back and forward buttons are the app's, not the
      // browser's history, which goes back on their release unless told.
      if (e.button > 2) e.preventDefault();
      if (this.p.viewOnly) return;
      if (e.pointerType === 'touch') {
        this.sendInput(e.type === 'pointercancel' ? 'touch_cancel' : 'touch_up',
          e.type === 'pointercancel' ? {} : { id: e.pointerId });
        this.sendInput('touch_frame', {});
        return;
      }
      if (e.type === 'pointercancel' && !this.pressed) return;
      this.sendInput('pointer_button', { button: BUTTONS[e.button] || 0x110, state: 0 });
      this.sendInput('pointer_frame', {});
      this.pressed = null;
    };
    c.addEventListener('pointerup', up);
    c.addEventListener('pointercancel', up);
    c.addEventListener('pointerleave', (e) => {
      if (e.pointerType !== 'touch' && !e.buttons && document.pointerLockElement !== c) {
        this.sendInput('pointer_leave', { window: w.id });
      }
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      if (this.p.viewOnly) return;
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
        this.sendInput('pointer_axis', { axis, value: Math.round(value * 256), discrete, source });
      }
      this.sendInput('pointer_frame', {});
    }, { passive: false });
  }

  // A click outside a grabbing popup dismisses it, and those above it.
  dismissPopups(e) {
    const grabbing = [...this.windows.values()].filter((w) => w.popup && (w.popup.flags & 1));
    if (!grabbing.length) return;
    const inside = e.target.closest && e.target.closest('.rcomp-popup');
    const keep = new Set();
    if (inside) {
      // The popup clicked in, and its parents, stay.
      for (let w = this.windows.get(Number(inside.dataset.window)); w && w.popup;
        w = this.windows.get(w.parent)) keep.add(w.id);
    }
    for (const w of grabbing.reverse()) {
      if (!keep.has(w.id)) this.send('popup_done', { window: w.id });
    }
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
    this.sendInput('pointer_constraint_state', { window: c.window.id, active });
  }

  // Text from the browser's input method, to the app's text input.
  preedit(text) {
    const w = this.focused;
    const ti = w && this.textInput.get(w.id);
    if (!ti || !(ti.flags & TEXT_INPUT.enabled)) return;
    const bytes = encoder.encode(text).length;
    this.sendInput('text_input_event', {
      window: w.id, flags: TEXT_INPUT.preedit, preedit_cursor_begin: bytes,
      preedit_cursor_end: bytes, delete_before: 0, delete_after: 0, preedit: text, commit: '',
    });
  }

  commit(text) {
    const w = this.focused;
    const ti = w && this.textInput.get(w.id);
    if (!ti || !(ti.flags & TEXT_INPUT.enabled) || this.p.viewOnly) return;
    this.sendInput('text_input_event', {
      window: w.id, flags: 0, preedit_cursor_begin: 0, preedit_cursor_end: 0,
      delete_before: 0, delete_after: 0, preedit: '', commit: text,
    });
  }

  // --- the clipboard, text both ways, as the browser's permissions allow:
  // the page reads the local clipboard when it gets the focus (and offers
  // it to the apps when it changed), and writes the apps' when they set it.

  async clipboardCheck() {
    if (this.p.viewOnly || !this.welcomed || !navigator.clipboard?.readText) return;
    let text;
    try {
      text = await navigator.clipboard.readText();
    } catch (e) {
      return; // not allowed, or no focus: the next focus tries again
    }
    if (!text || text === this.clip.ours || text === this.clip.theirs) return;
    this.clip.ours = text;
    this.send('selection', {
      kind: SELECTION.clipboard, count: TEXT_TYPES.length, types: mimeList(TEXT_TYPES),
    });
  }

  remoteSelection(m) {
    if (m.kind !== SELECTION.clipboard) return;
    if (m.count === 0) return;
    const types = parseMimeList(m.types, m.count);
    const mime = TEXT_TYPES.find((t) => types.includes(t));
    if (!mime) return;
    const id = this.clip.id++;
    this.clip.reads.set(id, []);
    this.send('transfer_request', { id, kind: SELECTION.clipboard, mime });
  }

  transferData(m) {
    const parts = this.clip.reads.get(m.id);
    if (!parts) return;
    if (m.len) {
      parts.push(m.data.slice());
      this.send('transfer_ack', { id: m.id, bytes: m.len, flags: 0 });
    }
    if (!(m.flags & (TRANSFER.end | TRANSFER.failed))) return;
    this.clip.reads.delete(m.id);
    if (m.flags & TRANSFER.failed) return;
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    const text = decoder.decode(all);
    this.clip.theirs = text;
    this.clip.ours = null;
    this.lastRemoteClipboard = text;
    navigator.clipboard?.writeText(text).catch(() => {
      this.status('the remote clipboard could not be written to the browser\'s (no permission)');
    });
  }

  // An app pastes what the page offered: the text, in chunks the app acks.
  transferRequest(m) {
    const text = m.kind === SELECTION.clipboard ? this.clip.ours : null;
    if (text === null || text === undefined) {
      this.send('transfer_data', { id: m.id, flags: TRANSFER.failed }, RECORD.bulk);
      return;
    }
    this.clip.writes.set(m.id, { data: encoder.encode(text), at: 0, unacked: 0 });
    this.pump(m.id);
  }

  pump(id) {
    const t = this.clip.writes.get(id);
    if (!t) return;
    while (t.unacked < TRANSFER.window) {
      const n = Math.min(TRANSFER.chunk, t.data.length - t.at, TRANSFER.window - t.unacked);
      const end = t.at + n >= t.data.length;
      this.send('transfer_data', {
        id, flags: end ? TRANSFER.end : 0, data: t.data.subarray(t.at, t.at + n),
      }, RECORD.bulk);
      t.at += n;
      t.unacked += n;
      if (end) {
        this.clip.writes.delete(id);
        return;
      }
    }
  }

  transferAck(m) {
    const t = this.clip.writes.get(m.id);
    if (!t) return;
    if (m.flags & TRANSFER.cancel) {
      this.clip.writes.delete(m.id);
      return;
    }
    t.unacked = Math.max(0, t.unacked - m.bytes);
    this.pump(m.id);
  }

  // --- the HUD: each window's figures, as rcomp-view's --hud has them

  toggleHud() {
    this.hudOn = !this.hudOn;
    this.send('stats_wanted', { on: this.hudOn ? 1 : 0 });
    for (const w of this.windows.values()) w.showHud(this.hudOn);
  }

  windowStats(w, m) {
    w.stats = m;
    const photon = median(w.photon);
    w.hud.textContent = `${w.codec || '-'}${m.threads ? ' ' + m.threads + ' thr' : ''}  ` +
      `app ${m.app_fps} sent ${m.sent_fps} fps  ${(m.bytes / 1024).toFixed(0)} KiB/s  ` +
      `rtt ${(m.rtt_us / 1000).toFixed(1)} ms` +
      (photon !== null ? `  input→photon ${photon.toFixed(1)} ms` : '');
  }

  status(text) {
    document.getElementById('rcomp-status').textContent = text;
  }

  error(text) {
    let el = document.getElementById('rcomp-error');
    if (!el) {
      el = document.createElement('div');
      el.id = 'rcomp-error';
      document.body.append(el);
    }
    el.textContent = text;
    this.status('');
  }

  stats() {
    return [...this.windows.values()].map((w) => ({
      window: w.id, title: w.el.dataset.title, appId: w.el.dataset.appId, popup: Boolean(w.popup),
      parent: w.parent, width: w.width, height: w.height, presented: w.presented,
      codec: w.codec || '', inputToPhotonMs: median(w.photon), photonSamples: w.photon.length,
      copyRects: w.copies, skipped: w.skipped, picture: w.picture,
      hud: w.hud.style.display === 'block' ? w.hud.textContent : null,
      appFps: w.stats ? w.stats.app_fps : null, sentFps: w.stats ? w.stats.sent_fps : null,
      rttMs: w.stats ? w.stats.rtt_us / 1000 : null,
      focused: this.focused === w, minimized: Boolean(w.minimized), resizing: Boolean(w.anchor),
      x: w.x, y: w.y,
    }));
  }
}

function median(a) {
  if (!a.length) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

const session = new Session(document.getElementById('rcomp-desk'), document.getElementById('rcomp-list'));
window.rcomp = {
  stats: () => session.stats(),
  session: () => ({
    bytes: session.bytes, connected: Boolean(session.ws && session.ws.readyState === WebSocket.OPEN),
    welcomed: session.welcomed, retries: session.retries, viewers: session.viewers || null,
    clipboard: session.lastRemoteClipboard ?? null, firstFrameMs: session.firstFrameMs || null,
    sound: session.sound ? session.sound.stats() : null,
    pointerLocked: Boolean(document.pointerLockElement), watching: Boolean(session.watching),
    pointerConstraint: session.constraint
      ? (session.constraint.type === CONSTRAINT.lock ? 'lock' : 'confine') : null,
    fullscreen: Boolean(document.fullscreenElement), keyboardLocked: session.keyboardLocked,
  }),
};
session.start();
