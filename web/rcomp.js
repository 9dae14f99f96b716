// The browser viewer: rcomp-run's session as rcomp-view shows it, each
// remote toplevel a window in the page. This is the session: it connects
// (connection.js) and connects again after a broken link, dispatches each
// message to the room it is for, and manages the windows (window.js) and
// their pictures (video.js for video); input.js, clipboard.js, sound.js
// and hud.js are the other rooms. The messages' layout comes from
// messages.js, which the build generates from wire/messages.h.
import { BYE, CAPS, CONSTRAINT, FRAME, HELLO, MAGIC, REQUEST, VERSION_MAJOR, VERSION_MINOR,
  VIEWERS } from './messages.js';
import { Connection, proofOf } from './connection.js';
import { Input } from './input.js';
import { Clipboard } from './clipboard.js';
import { Hud, median } from './hud.js';
import { layoutNames } from './keys.js';
import { RemoteWindow, placePopup } from './window.js';
import { VideoStream } from './video.js';
import { Sound } from './sound.js';
import { Tap } from './tap.js';

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
    tap: p.get('tap') === '1',
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
    this.bytes = 0;
    this.retries = 0;
    this.p = params();
    this.viewOnly = this.p.viewOnly;
    this.input = new Input(this);
    this.clipboard = new Clipboard(this);
    this.hud = new Hud(this, this.p.hud);
  }

  start() {
    this.input.listen();
    this.clipboard.listen();
    this.hud.listen();
    document.addEventListener('pointerdown', (e) => this.dismissPopups(e), true);
    document.addEventListener('visibilitychange', () => {
      for (const w of this.windows.values()) this.paintVideo(w);
    });
    if (!this.p.token) {
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

  async connect() {
    const p = this.p;
    if (this.proofFor !== p.token) {
      this.proof = await proofOf(p.token);
      this.proofFor = p.token;
    }
    let flags = 0;
    if (p.share) flags |= HELLO.share;
    if (p.viewOnly) flags |= HELLO.viewOnly | HELLO.share;
    let caps = CAPS.lz4 | CAPS.replace | CAPS.copyRect | CAPS.serverDecorations;
    if (typeof VideoDecoder !== 'undefined') caps |= CAPS.h264;
    if (p.sound && Sound.available()) caps |= CAPS.audio;
    this.held = []; // input before session_viewers
    this.viewers = null;
    this.welcomed = false;
    for (const w of this.windows.values()) w.stale = true;
    const conn = new Connection({
      magic: MAGIC, major: VERSION_MAJOR, minor: VERSION_MINOR, caps, flags, token: p.token,
    }, this.proof, {
      opened: () => this.status('connecting'),
      read: (n) => { this.bytes += n; },
      message: (m) => {
        if (conn === this.conn) this.handle(m);
      },
      failed: (err) => {
        if (conn !== this.conn) return;
        this.error('protocol error: ' + err.message);
        this.ended = true;
      },
      closed: () => {
        if (conn === this.conn) this.lost();
      },
    });
    this.conn = conn;
  }

  // The link broke without a goodbye: connect again, and get the session
  // back in the same windows (the snapshot names them again).
  lost() {
    this.input.end();
    if (this.sound) this.sound.stop();
    if (this.ended) return;
    const why = this.busy || 'the link broke';
    if (this.retries === 0 && !this.everWelcomed && !this.busy) {
      this.error('cannot reach rcomp-run at ' + location.host);
    }
    this.busy = null;
    const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries++;
    this.status(`${why}; connecting again in ${(wait / 1000).toFixed(1)} s`);
    setTimeout(() => this.connect(), wait);
  }

  send(name, values, cls) {
    this.conn?.send(name, values, cls);
  }

  // Input goes only from a viewer that may give it.
  // Until the session says whether this viewer only watches (after the
  // snapshot), input waits; a watcher's never goes.
  sendInput(name, values) {
    if (this.viewOnly || this.watching) return;
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
        if (m.reason === BYE.busy) {
          // Busy is for now (a door under a flood, a full session): the
          // link's close tries again, later each time.
          this.busy = m.text || 'the session is busy';
          break;
        }
        this.ended = true;
        this.error(m.text || (m.reason === BYE.unauthorized ? 'wrong token'
          : 'the session said goodbye'));
        break;
      case 'sync':
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
        if (w) this.input.grab(w, m);
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
        if (w) this.hud.windowStats(w, m);
        break;
      case 'video_stats':
        if (w) this.hud.videoStats(w, m);
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
        if (w) this.input.setConstraint(w, m);
        break;
      case 'text_input':
        this.input.textInputState(m);
        break;
      case 'selection':
        this.clipboard.selection(m);
        break;
      case 'transfer_request':
        this.clipboard.request(m);
        break;
      case 'transfer_data':
        this.clipboard.data(m);
        break;
      case 'transfer_ack':
        this.clipboard.ack(m);
        break;
      case 'audio':
      case 'audio_end':
        if (this.sound) this.sound.message(m);
        break;
      default:
        break; // nothing the page shows (window_parent, window_decoration, host_name...)
    }
  }

  async welcome() {
    this.hud.welcomed();
    if (this.p.sound && Sound.available()) {
      if (!this.sound) this.sound = new Sound();
      this.sound.start();
    }
    if (!this.viewOnly) {
      const names = await layoutNames(this.p);
      this.send('keymap', { format: 2, data: names });
      this.clipboard.check();
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
    this.input.attach(w);
    w.showHud(this.hud.on);
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
    if (old) old.setActivated(false);
    w.setActivated(true);
    for (const o of this.windows.values()) o.listButton?.classList.toggle('rcomp-on', o === w);
    this.input.focusMoved(old, w);
    this.clipboard.check();
  }

  request(w, r) {
    switch (r) {
      case REQUEST.maximize: w.setMaximized(true); break;
      case REQUEST.unmaximize: w.setMaximized(false); break;
      case REQUEST.fullscreen:
        // The window fills the page; the page fills the screen where the
        // browser allows.
        w.setFullscreen(true);
        this.input.fullscreen();
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
        this.conn.close();
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
    if (this.tap) this.tap.painted(w);
    if (!this.firstFrameMs) this.firstFrameMs = performance.now(); // from the page's start
    if (w.pendingMark) {
      const sent = this.input.markedAt(w.pendingMark);
      if (sent) {
        w.photon.push(performance.now() - sent);
        if (w.photon.length > 64) w.photon.shift();
      }
      w.pendingMark = 0;
    }
    this.send('frame_ack', { window: w.id, seq, recv_time_us: performance.now() * 1000 });
  }

  setCursor(m) {
    let cursor = 'none';
    if (m.width > 0 && m.height > 0) {
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
      cursor = `url(${url}) ${Math.max(0, hx)} ${Math.max(0, hy)}, default`;
    }
    this.desk.style.setProperty('--rcomp-cursor', cursor);
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

const session = new Session(document.getElementById('rcomp-desk'), document.getElementById('rcomp-list'));
if (session.p.tap) session.tap = new Tap();
window.rcomp = {
  stats: () => session.stats(),
  tap: session.tap || null,
  session: () => ({
    bytes: session.bytes, connected: Boolean(session.conn?.open),
    welcomed: session.welcomed, retries: session.retries, viewers: session.viewers || null,
    clipboard: session.clipboard.theirs, firstFrameMs: session.firstFrameMs || null,
    sound: session.sound ? session.sound.stats() : null,
    pointerLocked: Boolean(document.pointerLockElement), watching: Boolean(session.watching),
    pointerConstraint: session.input.constraint
      ? (session.input.constraint.type === CONSTRAINT.lock ? 'lock' : 'confine') : null,
    fullscreen: Boolean(document.fullscreenElement), keyboardLocked: session.input.keyboardLocked,
  }),
};
session.start();
