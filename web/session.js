// The browser viewer's session: it connects (connection.js), connects
// again after a broken link or a busy refusal, says hello with what the
// page can do, sends (input only where this viewer may give it), and hands
// each message to dispatch.js. The rooms it holds: the desk (desk.js: the
// windows), input.js, clipboard.js, hud.js and sound.js.
import { CAPS, HELLO, MAGIC, VERSION_MAJOR, VERSION_MINOR } from './messages.js';
import { Connection, proofOf } from './connection.js';
import { Input } from './input.js';
import { Clipboard } from './clipboard.js';
import { Hud, median } from './hud.js';
import { layoutNames } from './keys.js';
import { Desk } from './desk.js';
import { dispatch } from './dispatch.js';
import { paintVideo } from './pictures.js';
import { Sound } from './sound.js';

const RETRY_MS = [250, 500, 1000, 2000, 4000];

export function params() {
  const p = new URLSearchParams(location.hash.slice(1));
  return {
    token: p.get('token') || '',
    gate: p.get('gate') || '', // a session of the gate's (rcomp-gate): the login cookie admits
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

export class Session {
  constructor(desk, list) {
    this.desk = new Desk(this, desk, list);
    this.bytes = 0;
    this.retries = 0;
    this.p = params();
    this.viewOnly = this.p.viewOnly;
    this.input = new Input(this);
    this.clipboard = new Clipboard(this);
    this.hud = new Hud(this, this.p.hud);
  }

  // The windows, and the one that has the keyboard (the desk's).
  get windows() {
    return this.desk.windows;
  }

  get focused() {
    return this.desk.focused;
  }

  start() {
    this.input.listen();
    this.clipboard.listen();
    this.hud.listen();
    this.desk.listen();
    document.addEventListener('visibilitychange', () => {
      for (const w of this.windows.values()) paintVideo(this, w);
    });
    if (!this.p.token && !this.p.gate) {
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
    if (!p.gate && this.proofFor !== p.token) {
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
    }, p.gate ? { gate: p.gate, share: p.share } : this.proof, {
      opened: () => this.status('connecting'),
      read: (n) => { this.bytes += n; },
      message: (m) => {
        if (conn === this.conn) dispatch(this, m);
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
      focused: this.desk.focused === w, minimized: Boolean(w.minimized), resizing: Boolean(w.anchor),
      x: w.x, y: w.y,
    }));
  }
}
