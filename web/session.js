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
import { Veil } from './veil.js';
import { BYE } from './messages.js';
import { Menu } from './menu.js';
import { Keybar } from './keybar.js';
import { Touchpad } from './touchpad.js';
import { windowless } from './windowless.js';
import { Files } from './files.js';
import { Notes } from './notes.js';

const RETRY_MS = [250, 500, 1000, 2000, 4000];

export function params() {
  const p = new URLSearchParams(location.hash.slice(1));
  return {
    token: p.get('token') || '',
    gate: p.get('gate') || '', // a session of the gate's (rcomp-gate): the login cookie admits
    app: p.get('app') || '', // the gate's app the session runs: started again from an end
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
    this.minor = 0; // the server's minor version, at its welcome
    this.p = params();
    this.viewOnly = this.p.viewOnly;
    this.input = new Input(this);
    this.clipboard = new Clipboard(this);
    this.hud = new Hud(this, this.p.hud);
    this.veil = new Veil();
    this.files = new Files(this);
    this.notes = new Notes(this);
    this.menu = new Menu(this);
    this.keybar = new Keybar(this);
    this.touchpad = new Touchpad(this, desk);
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
    this.menu.listen();
    this.keybar.listen();
    this.input.setTouchMode(this.menu.kept.touch);
    document.addEventListener('visibilitychange', () => {
      for (const w of this.windows.values()) paintVideo(this, w);
    });
    if (!this.p.token && !this.p.gate) {
      this.askToken();
      return;
    }
    this.connect();
  }

  // No token in the address (or a wrong one): the page asks for it, above
  // everything, and keeps it only in the fragment, which no request
  // carries.
  askToken(why = '') {
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
      this.veil.hide();
      this.p.token = v;
      this.ended = false;
      this.retries = 0;
      this.connect();
    });
    this.veil.show(why || 'this session asks for its token', {
      error: Boolean(why),
      more: 'The token is in the file rcomp-run names when it starts (its .token file).',
      form,
    });
    form.querySelector('input').focus();
  }

  // The ways on from an end, by where the page came from: the gate's list
  // of the user's sessions, or this session again.
  waysOn(again) {
    const ways = [];
    if (again) ways.push(again);
    if (this.p.gate) ways.push({ id: 'sessions', label: 'your sessions', href: '/' });
    return ways;
  }

  // The gate's app of an ended session, started anew: the new session
  // opens in this page.
  startAgain() {
    if (!this.p.gate || !this.p.app) return null;
    return {
      id: 'again', label: `start ${this.p.app} again`, run: async () => {
        try {
          const me = await (await fetch('/api/me', { credentials: 'same-origin' })).json();
          const r = await fetch('/api/start', {
            method: 'POST', credentials: 'same-origin',
            body: new URLSearchParams({ app: this.p.app, csrf: me.csrf || '' }),
          });
          const body = await r.json();
          if (!r.ok) throw new Error(body.error || r.statusText);
          const h = new URLSearchParams({ gate: body.name, app: this.p.app });
          history.replaceState(null, '', '#' + h.toString());
          this.p.gate = body.name;
          this.p.share = false;
          this.p.viewOnly = false;
          this.viewOnly = false;
          this.ended = false;
          this.retries = 0;
          this.veil.hide();
          this.desk.clear();
          this.connect();
        } catch (e) {
          this.error('cannot start ' + this.p.app + ' again: ' + e.message,
            { ways: this.waysOn(null) });
        }
      },
    };
  }

  // The session said goodbye: each reason its words and its way on.
  goodbye(reason, status, text) {
    this.ended = true;
    const connectAgain = (label, id, share) => ({
      id, label, run: () => {
        this.p.share = share;
        this.ended = false;
        this.retries = 0;
        this.veil.hide();
        this.connect();
      },
    });
    if (reason === BYE.unauthorized && !this.p.gate) {
      this.askToken(text || 'the token was refused');
    } else if (reason === BYE.unauthorized) {
      this.loginEnded(text);
    } else if (reason === BYE.takenOver) {
      this.error(text || 'another viewer took this session over', {
        more: 'Its windows here are only what they last showed.',
        ways: this.waysOn(connectAgain('take it back', 'take-back', false)),
      });
    } else if (reason === BYE.appExited) {
      this.error(status ? (text || `the app exited with status ${status}`)
        : 'the session has ended: its app exited', {
        error: Boolean(status),
        ways: this.waysOn(this.startAgain()),
      });
    } else if (reason === BYE.noSession) {
      // The same words for a session that ended and another user's: which
      // names exist is nobody else's business.
      this.error(this.p.gate ? `no session of yours is named ${this.p.gate}`
        : (text || 'no such session is running'), {
        more: this.p.gate ? 'It has ended, or it was never yours.' : '',
        ways: this.waysOn(this.startAgain()),
      });
    } else {
      this.error(text || 'the session said goodbye', {
        ways: this.waysOn(reason === BYE.shutdown ? null
          : connectAgain('try again', 'again', this.p.share)),
      });
    }
  }

  // The gate no longer knows this page's login: logged out (here or in
  // another tab) or expired. Logging in again comes back to this session.
  loginEnded(text) {
    this.ended = true;
    const back = new URLSearchParams({ back: this.p.gate });
    if (this.p.share) back.set('how', 'share');
    if (this.p.viewOnly) back.set('how', 'view-only');
    this.error(text || 'you are not logged in at the gate: you logged out, or the login expired', {
      more: 'The session runs on.',
      ways: [{ id: 'login', label: 'log in again', href: '/#' + back.toString() }],
    });
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
    // The menu's "sharp": a viewer that takes no video gets every picture
    // lossless.
    if (typeof VideoDecoder !== 'undefined' && this.menu.kept.quality !== 'sharp') caps |= CAPS.h264;
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
      // A door's goodbye once the session has spoken comes as the
      // close's code, 4000 + its reason, and its words (bridge.h).
      closed: (e) => {
        if (conn !== this.conn) return;
        if (e && e.code >= 4000 && e.code < 4100 && e.code - 4000 !== BYE.busy) {
          this.input.end();
          if (this.sound) this.sound.stop();
          this.goodbye(e.code - 4000, 0, e.reason);
          return;
        }
        if (e && e.code - 4000 === BYE.busy) this.busy = e.reason || 'the gate is busy';
        this.lost();
      },
    });
    this.conn = conn;
  }

  // A new connection by choice (the menu's picture): the windows stay, and
  // the old link's end is nobody's news.
  reconnect() {
    const old = this.conn;
    this.conn = null;
    old?.close();
    this.input.end();
    if (this.sound) this.sound.stop();
    this.connect();
  }

  // The menu's disconnect: the session runs on, and the veil connects again.
  disconnect() {
    const old = this.conn;
    this.conn = null;
    old?.close();
    this.input.end();
    if (this.sound) this.sound.stop();
    this.error('disconnected: the session runs on', {
      error: false,
      ways: this.waysOn({
        id: 'again', label: 'connect again', run: () => {
          this.veil.hide();
          this.retries = 0;
          this.connect();
        },
      }),
    });
  }

  // The menu's log out (the gate's): this login ends, its sessions run on.
  async logOut() {
    try {
      const me = await (await fetch('/api/me', { credentials: 'same-origin' })).json();
      await fetch('/api/logout', {
        method: 'POST', credentials: 'same-origin', body: new URLSearchParams({ csrf: me.csrf || '' }),
      });
    } catch (e) {
      // logged out already: the page says so anyway
    }
    this.ended = true;
    location.href = '/#logged-out';
  }

  // Links that open this session in another browser: beside this viewer
  // (share) or to watch. A gate's need the same user's login; a token's
  // carry the token, and the watch link the session's watch token
  // (rcomp-run --watch-token), which admits no input.
  shareLinks() {
    const base = location.origin + location.pathname;
    if (this.p.gate) {
      const h = (how) => {
        const q = new URLSearchParams({ gate: this.p.gate });
        if (this.p.app) q.set('app', this.p.app);
        q.set(how, '1');
        return base + '#' + q.toString();
      };
      return [
        { id: 'share', label: 'share (your login, beside this viewer):', url: h('share') },
        { id: 'watch', label: 'watch (your login, no input):', url: h('view-only') },
      ];
    }
    const links = [{
      id: 'share', label: 'share (anyone with it may type):',
      url: `${base}#token=${encodeURIComponent(this.p.token)}&share=1`,
    }];
    if (this.watchToken) {
      links.push({
        id: 'watch', label: 'watch (no input):',
        url: `${base}#token=${encodeURIComponent(this.watchToken)}&view-only=1`,
      });
    } else {
      links.push({ id: 'watch', label: 'watch:', note: 'start rcomp-run with --watch-token for a link that only watches' });
    }
    return links;
  }

  // The link broke without a goodbye: connect again, and get the session
  // back in the same windows (the snapshot names them again).
  async lost() {
    this.input.end();
    if (this.sound) this.sound.stop();
    if (this.ended) return;
    if (this.p.gate && await this.loggedOut()) {
      this.loginEnded('');
      return;
    }
    const why = this.busy || (this.everWelcomed ? 'the link broke'
      : 'cannot reach ' + (this.p.gate ? 'the gate' : 'rcomp-run') + ' at ' + location.host);
    const first = !this.everWelcomed && !this.busy;
    this.busy = null;
    const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries++;
    const timer = setTimeout(() => this.connect(), wait);
    this.veil.show(why, {
      error: first,
      more: `connecting again in ${(wait / 1000).toFixed(1)} s; what the windows show is ` +
        'from before',
      ways: [{
        id: 'now', label: 'try now', run: () => {
          clearTimeout(timer);
          this.connect();
        },
      }],
    });
    this.status(`${why}; connecting again in ${(wait / 1000).toFixed(1)} s`);
  }

  // Whether the gate says this page's login is gone (a WebSocket's refusal
  // says nothing a page can read; the gate's API does).
  async loggedOut() {
    try {
      const r = await fetch('/api/me', { credentials: 'same-origin' });
      return r.status === 401 || r.status === 403;
    } catch (e) {
      return false; // the gate itself is away: try again
    }
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
    this.watchWindows();
    if (this.p.sound && Sound.available()) {
      if (!this.sound) this.sound = new Sound();
      // A new AudioContext holds the page's thread a third of a second
      // (headless chromium here): the first window is shown first, or in a
      // second where none comes.
      if (this.sound.context) this.sound.start();
      else this.soundTimer = setTimeout(() => this.startSound(), 1000);
    }
    if (!this.viewOnly) {
      const names = await layoutNames(this.p);
      this.send('keymap', { format: 2, data: names });
      this.clipboard.check();
    }
    this.files.welcomed();
  }

  startSound() {
    if (!this.soundTimer) return;
    clearTimeout(this.soundTimer);
    this.soundTimer = null;
    if (this.sound && !this.ended) this.sound.start();
  }

  // A window's first picture is on the screen.
  shown() {
    if (this.soundTimer) setTimeout(() => this.startSound(), 0);
  }

  // A session whose app opens no window (a server, a daemon) says so on
  // the empty desk, and the gate's page flags its entry from then on.
  watchWindows() {
    clearTimeout(this.windowTimer);
    this.windowTimer = setTimeout(() => {
      const none = ![...this.windows.values()].some((w) => !w.popup);
      if (this.p.app) windowless.note(this.p.app, none);
      this.desk.emptyNote(none && !this.ended ? `${this.p.app || 'The app'} has opened no ` +
        'window: it may run without one (a server). The session runs on' +
        (this.p.gate ? '; stop it from your sessions.' : '.') : '');
    }, 5000);
  }

  status(text) {
    document.getElementById('rcomp-status').textContent = text;
  }

  // An end or a failure, above every window (veil.js), with its ways on.
  error(text, options = {}) {
    // The browser's console keeps it too: what a tester or a bug report
    // reads once the veil has gone.
    console.warn('rcomp: ' + text);
    this.veil.show(text, options);
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
