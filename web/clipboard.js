// The clipboard, text both ways, as the browser's permissions allow: the
// page reads the local clipboard when it gets the focus (and offers it to
// the apps when it changed), and writes the apps' when they set it. The
// data goes in transfers of chunks the other side acks, as rcomp-view's
// clipboard room sends them.
import { RECORD, SELECTION, TRANSFER } from './messages.js';
import { decoder, encoder, mimeList, parseMimeList } from './wire.js';

const TEXT_TYPES = ['text/plain;charset=utf-8', 'UTF8_STRING', 'text/plain', 'STRING', 'TEXT'];

export class Clipboard {
  // session: viewOnly, welcomed, send(name, values, cls), status(text).
  constructor(session) {
    this.session = session;
    this.ours = null; // the local text last offered to the apps
    this.theirs = null; // the apps' text last written to the browser's
    this.id = 1;
    this.reads = new Map(); // transfer id: chunks of the apps' text so far
    this.writes = new Map(); // transfer id: the local text going to an app
  }

  listen() {
    window.addEventListener('focus', () => this.check());
    document.addEventListener('visibilitychange', () => this.check());
    document.addEventListener('copy', () => setTimeout(() => this.check(), 0));
  }

  async check() {
    const s = this.session;
    if (s.viewOnly || !s.welcomed || !navigator.clipboard?.readText) return;
    let text;
    try {
      text = await navigator.clipboard.readText();
      this.readable = true;
    } catch (e) {
      // Not allowed, or no focus: the next focus tries again.
      if (e.name === 'NotAllowedError' && document.hasFocus()) this.readable = false;
      return;
    }
    if (!text || text === this.ours || text === this.theirs) return;
    this.ours = text;
    s.send('selection', {
      kind: SELECTION.clipboard, count: TEXT_TYPES.length, types: mimeList(TEXT_TYPES),
    });
  }

  // The menu's panel: text put on the session's clipboard by hand, for a
  // browser that does not let the page read its own.
  offer(text) {
    const s = this.session;
    if (s.viewOnly || !text) return;
    this.ours = text;
    s.send('selection', {
      kind: SELECTION.clipboard, count: TEXT_TYPES.length, types: mimeList(TEXT_TYPES),
    });
  }

  // Whether the clipboard goes both ways by itself, in words.
  state() {
    if (this.session.viewOnly) return 'watching: nothing goes to the session';
    if (this.readable === false) {
      return 'the browser does not let this page read its clipboard: copies from the ' +
        'session come here and to the browser where it allows; paste below to send';
    }
    if (this.readable) return 'in sync both ways: what you copy here reaches the session';
    return 'the browser asks before the page may read its clipboard: copies reach the ' +
      'session once allowed, or paste below';
  }

  // An app set the clipboard: the page asks for its text.
  selection(m) {
    if (m.kind !== SELECTION.clipboard || m.count === 0) return;
    const types = parseMimeList(m.types, m.count);
    const mime = TEXT_TYPES.find((t) => types.includes(t));
    if (!mime) return;
    const id = this.id++;
    this.reads.set(id, []);
    this.session.send('transfer_request', { id, kind: SELECTION.clipboard, mime });
  }

  data(m) {
    const parts = this.reads.get(m.id);
    if (!parts) return;
    if (m.len) {
      parts.push(m.data.slice());
      this.session.send('transfer_ack', { id: m.id, bytes: m.len, flags: 0 });
    }
    if (!(m.flags & (TRANSFER.end | TRANSFER.failed))) return;
    this.reads.delete(m.id);
    if (m.flags & TRANSFER.failed) return;
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    const text = decoder.decode(all);
    this.theirs = text;
    this.ours = null;
    this.session.menu?.refresh();
    navigator.clipboard?.writeText(text).catch(() => {
      this.session.status('the session\'s clipboard is in the menu (the browser refused it)');
    });
  }

  // An app pastes what the page offered: the text, in chunks the app acks.
  request(m) {
    const text = m.kind === SELECTION.clipboard ? this.ours : null;
    if (text === null || text === undefined) {
      this.session.send('transfer_data', { id: m.id, flags: TRANSFER.failed }, RECORD.bulk);
      return;
    }
    this.writes.set(m.id, { data: encoder.encode(text), at: 0, unacked: 0 });
    this.pump(m.id);
  }

  pump(id) {
    const t = this.writes.get(id);
    if (!t) return;
    while (t.unacked < TRANSFER.window) {
      const n = Math.min(TRANSFER.chunk, t.data.length - t.at, TRANSFER.window - t.unacked);
      const end = t.at + n >= t.data.length;
      this.session.send('transfer_data', {
        id, flags: end ? TRANSFER.end : 0, data: t.data.subarray(t.at, t.at + n),
      }, RECORD.bulk);
      t.at += n;
      t.unacked += n;
      if (end) {
        this.writes.delete(id);
        return;
      }
    }
  }

  ack(m) {
    const t = this.writes.get(m.id);
    if (!t) return;
    if (m.flags & TRANSFER.cancel) {
      this.writes.delete(m.id);
      return;
    }
    t.unacked = Math.max(0, t.unacked - m.bytes);
    this.pump(m.id);
  }
}
