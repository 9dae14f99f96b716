// Files across the link, the page's side of protocol/files.h: the person's
// files (the menu's upload, a drop on a window) go to the session, each
// hashed (SHA-256) and offered before its bytes, which go in the bulk class
// while the WebSocket keeps up, within the group's window; what the session
// sends (rcomp-run --send) comes back checked and is handed to the browser
// as a download, a print opened in the browser's PDF viewer. The window of a
// group's bytes unacknowledged follows the acks' delay as rcomp-view's does
// (protocol/files.c): grown while they come back as fast as the least round
// trip, cut once a round trip when a queue builds, so a key typed during an
// upload waits for little. A group waits through a broken link and goes on
// from the last byte the other side wrote. A panel shows each with its
// progress and a cancel. The page holds a file in memory to hash it, so it
// takes files up to PAGE_FILE_MAX.
import { FILES, RECORD } from './messages.js';
import { encoder } from './wire.js';

const HIGH_WATER = 1 << 20; // the WebSocket's buffered bytes before file data waits
export const PAGE_FILE_MAX = 2 ** 31; // bytes of one file the page sends or takes
const CHUNK = 65536;

// A group's window (protocol/files.c's adapt_window): bytes that may be
// unacknowledged, and when each recent chunk went, to time the acks.
export class SendWindow {
  constructor() {
    this.size = FILES.windowStart;
    this.minRtt = Infinity; // ms
    this.cut = -Infinity;
    this.grown = false; // past its start, where it doubles a round trip
    this.roundEnd = 0; // this round trip's last byte, and its least queue
    this.roundQueue = Infinity;
    this.lastRoundQueue = 0; // the least queue of the round trip before
    // Each round trip's delivery, and the most seen: the window never goes
    // below that times the round trip.
    this.roundStart = null; // [ms, bytes]
    this.maxRate = 0; // bytes a ms
    this.sends = []; // [end offset, ms]
  }

  // Offsets begin again (a new file, a rewind): the size and round trip stay.
  restart() {
    this.sends = [];
    this.roundEnd = 0;
    this.roundStart = null;
  }

  // A sixteenth of the window a chunk (2 to 64 KiB): a key behind one waits
  // for little, and the acks that time the round trip come often.
  get chunk() {
    return Math.max(FILES.chunkMin, Math.min(CHUNK, Math.floor(this.size / 16)));
  }

  sent(end, now) {
    this.sends.push([end, now]);
    if (this.sends.length > 256) this.sends.shift();
  }

  // An ack of received bytes that moved the window by bytes.
  acked(received, bytes, sent, now) {
    let at = null;
    for (let i = this.sends.length - 1; i >= 0; i--) {
      if (this.sends[i][0] <= received) {
        at = this.sends[i][1];
        break;
      }
    }
    if (at === null || now < at) return;
    const rtt = now - at;
    this.minRtt = Math.min(this.minRtt, rtt);
    const queue = rtt - this.minRtt;
    const most = FILES.queueUs / 1000;
    const roundQueue = Math.min(this.roundQueue, queue);
    const roundEnded = received >= this.roundEnd;
    this.roundQueue = roundEnded ? Infinity : roundQueue;
    if (roundEnded) {
      this.roundEnd = sent;
      this.lastRoundQueue = roundQueue;
      if (this.roundStart && now > this.roundStart[0] && received > this.roundStart[1]) {
        this.maxRate = Math.max(this.maxRate, (received - this.roundStart[1]) / (now - this.roundStart[0]));
      }
      this.roundStart = [now, received];
    }
    // What stays of the queue, not one ack's jitter.
    const standing = Math.min(queue, this.lastRoundQueue);
    if (!this.grown) {
      if ((roundEnded && roundQueue >= most / 2) || queue > most) this.grown = true;
      else this.size += bytes;
    } else if (standing > most) {
      if (now - this.cut > rtt) {
        this.size = this.size * (this.minRtt + most / 2) / rtt;
        this.cut = now;
      }
    } else {
      this.size += (most / 2 - standing) / (most / 2) * bytes / FILES.gain;
    }
    // Never below what the link carried in a round trip: a delay that is
    // not our queue must not starve it.
    this.size = Math.max(this.size, this.maxRate * this.minRtt);
    this.size = Math.max(FILES.windowMin, Math.min(FILES.window, Math.floor(this.size)));
  }
}

async function sha256(data) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data));
}

function same(a, b) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

// A local name made one the session takes (files_clean_name's rule).
export function cleanName(name) {
  let n = [...name].map((c) => (c < ' ' || c === '\x7f' || c === '/' || c === '\\' ? '_' : c)).join('');
  if (n.startsWith('.')) n = '_' + n.slice(1);
  return n || '_';
}

// A name the session gave: files_path_ok's rule.
function pathOk(path) {
  const bytes = encoder.encode(path).length;
  if (!bytes || bytes > FILES.maxPath) return false;
  const parts = path.split('/');
  return parts.length <= 16 && parts.every((p) => p.length > 0 && encoder.encode(p).length <= 255 &&
    !p.startsWith('.') && !/[\x00-\x1f\x7f\\]/.test(p));
}

function mb(n) {
  return (n / 1e6).toFixed(1);
}

export class Files {
  // session: send(name, values, cls), conn (bufferedAmount), viewOnly.
  constructor(session) {
    this.session = session;
    this.out = new Map(); // our groups, by id
    this.in = new Map(); // the session's, by id
    this.panel = null;
    this.ended = []; // what became of the last groups, for the panel
    this.prints = []; // the session's prints: {name, url (a blob of the PDF), opened}
  }

  get linkUp() {
    const s = this.session;
    return Boolean(s.conn?.open && s.welcomed && s.minor >= 8);
  }

  send(name, values, cls) {
    if (this.linkUp) this.session.send(name, values, cls);
  }

  // The person's files ([{file, path}]) to the session, as kind: a drop on
  // window w at x, y (24.8), or an upload.
  give(items, kind, w = null, x = 0, y = 0) {
    if (this.session.viewOnly || this.session.watching) {
      this.note('a viewer that watches gives no files');
      return 0;
    }
    if (!items.length) return 0;
    const big = items.find((i) => i.file.size > PAGE_FILE_MAX);
    if (big) {
      this.note(`${big.path} is larger than the ${mb(PAGE_FILE_MAX)} MB the page sends`);
      return 0;
    }
    if (items.length > FILES.maxFiles) {
      this.note(`more than ${FILES.maxFiles} files at once`);
      return 0;
    }
    const id = crypto.getRandomValues(new Uint32Array(1))[0] || 1;
    const g = {
      id, kind, window: w ? w.id : 0, x, y, files: items.map((i) => ({
        file: i.file, path: i.path, size: i.file.size, sha: null,
      })),
      bytes: items.reduce((n, i) => n + i.file.size, 0),
      cur: 0, sent: 0, acked: 0, done: 0, started: false, offered: false, pumping: false,
      rate: new Rate(), flight: new SendWindow(),
    };
    this.out.set(id, g);
    this.announce(g);
    this.show();
    return id;
  }

  announce(g) {
    g.started = false;
    g.flight = new SendWindow(); // a new link is measured afresh
    g.offered = false;
    this.send('file_group', {
      group: g.id, kind: g.kind, window: g.window, x: g.x, y: g.y, files: g.files.length,
      bytes: g.bytes, flags: 0,
    });
  }

  // A new link: our groups go on with it; the session's come again.
  welcomed() {
    for (const g of this.out.values()) this.announce(g);
  }

  cancel(id) {
    const g = this.out.get(id) || this.in.get(id);
    if (!g) return;
    this.send('file_done', { group: id, status: FILES.cancelled, file: g.cur || 0, text: 'cancelled' });
    this.finish(g, FILES.cancelled, 'cancelled');
  }

  finish(g, status, text) {
    this.out.delete(g.id);
    this.in.delete(g.id);
    const name = g.files ? (g.files.length > 1 ? `${g.files.length} files` : g.files[0].path)
      : g.name;
    const how = ['whole', 'cancelled', 'refused', 'failed'][status] || 'failed';
    this.ended.unshift({ id: g.id, name, status, text: status === FILES.whole ? text : `${how}: ${text}` });
    this.ended.length = Math.min(this.ended.length, 4);
    this.show();
  }

  // Sends what the window and the WebSocket allow; once at a time.
  async pump(g) {
    if (g.pumping) return;
    g.pumping = true;
    try {
      while (this.out.get(g.id) === g && g.started && g.cur < g.files.length && this.linkUp) {
        const f = g.files[g.cur];
        if (!f.sha) f.sha = await sha256(await f.file.arrayBuffer());
        if (!g.offered) {
          this.send('file_offer', {
            group: g.id, file: g.cur, size: f.size, mode: 0o644, sha256: f.sha, path: f.path,
          });
          g.offered = true;
        }
        if (g.sent >= f.size || g.sent - g.acked >= g.flight.size) break;
        if (this.session.conn.ws.bufferedAmount > HIGH_WATER) {
          setTimeout(() => this.pump(g), 20);
          break;
        }
        const at = g.sent;
        const end = Math.min(f.size, at + g.flight.chunk);
        const data = new Uint8Array(await f.file.slice(at, end).arrayBuffer());
        if (this.out.get(g.id) !== g || g.sent !== at || !g.started) continue; // rewound meanwhile
        this.send('file_data', { group: g.id, file: g.cur, offset: at, data }, RECORD.bulk);
        g.sent += data.length;
        g.flight.sent(g.sent, performance.now());
        g.rate.add(data.length);
      }
    } finally {
      g.pumping = false;
    }
    this.show();
  }

  message(m) {
    switch (m.message) {
      case 'file_group': this.group(m); break;
      case 'file_offer': this.offer(m); break;
      case 'file_data': this.data(m); break;
      case 'file_ack': this.ack(m); break;
      case 'file_done': this.done(m); break;
      default: break;
    }
  }

  // The session's ack of ours: where to begin, then how far it wrote.
  ack(m) {
    const g = this.out.get(m.group);
    if (!g) return;
    if (m.file > g.files.length || (m.file < g.files.length && m.received > g.files[m.file].size)) {
      this.cancel(g.id);
      return;
    }
    if (g.started && m.file < g.cur) return;
    if (!g.started || m.file > g.cur) {
      g.started = true;
      g.cur = m.file;
      g.done = g.files.slice(0, m.file).reduce((n, f) => n + f.size, 0);
      g.offered = false;
      g.sent = g.acked = m.received;
      g.flight.restart();
    } else if (m.flags & FILES.fromHere) {
      g.sent = g.acked = m.received; // it dropped what came out of order
      g.flight.restart();
    } else {
      if (m.received > g.acked) g.flight.acked(m.received, m.received - g.acked, g.sent, performance.now());
      g.acked = Math.max(g.acked, m.received);
      g.sent = Math.max(g.sent, g.acked);
    }
    this.pump(g);
  }

  done(m) {
    const g = this.out.get(m.group) || this.in.get(m.group);
    if (g) this.finish(g, m.status, m.text);
  }

  // The session's files to the person: saved as the browser's downloads.
  group(m) {
    const known = this.in.get(m.group);
    if (known) {
      this.ackIn(known, true); // the same group again, on a new link
      return;
    }
    const refuse = (why) => this.send('file_done', {
      group: m.group, status: FILES.refused, file: 0, text: why,
    });
    if (m.kind !== FILES.send && m.kind !== FILES.print) {
      refuse('the page takes only files the session sends');
      return;
    }
    if (m.bytes > PAGE_FILE_MAX * m.files) {
      refuse(`the page takes files up to ${mb(PAGE_FILE_MAX)} MB`);
      return;
    }
    // What the menu's files says: save (yes), ask, or refuse (no).
    const take = this.session.menu?.kept.files || 'yes';
    if (take === 'no') {
      refuse('refused: this page takes no files (its menu\'s files: refuse)');
      return;
    }
    const g = { id: m.group, kind: m.kind, count: m.files, bytes: m.bytes, cur: 0, written: 0,
      ackSent: 0, file: null, done: 0, name: m.files > 1 ? `${m.files} files` : 'a file',
      rate: new Rate(), asking: take === 'ask' };
    this.in.set(m.group, g);
    if (!g.asking) this.ackIn(g, true);
    this.show();
  }

  // The person's answer to a group it was asked about: nothing came before.
  answer(id, yes) {
    const g = this.in.get(id);
    if (!g || !g.asking) return;
    g.asking = false;
    if (yes) {
      this.ackIn(g, true);
      this.show();
      return;
    }
    const why = 'refused: the person said no';
    this.send('file_done', { group: id, status: FILES.refused, file: 0, text: why });
    this.finish(g, FILES.refused, why);
  }

  ackIn(g, fromHere = false) {
    g.ackSent = g.written;
    this.send('file_ack', {
      group: g.id, file: g.cur, received: g.written, flags: fromHere ? FILES.fromHere : 0,
    });
  }

  offer(m) {
    const g = this.in.get(m.group);
    if (!g) return;
    const fail = (why) => {
      this.send('file_done', { group: g.id, status: FILES.refused, file: g.cur, text: why });
      this.finish(g, FILES.refused, why);
    };
    if (m.file !== g.cur) return fail(`file ${m.file} came while ${g.cur} was due`);
    if (!pathOk(m.path)) return fail('refused: a name the page does not take');
    if (m.size > PAGE_FILE_MAX) return fail(`the page takes files up to ${mb(PAGE_FILE_MAX)} MB`);
    if (g.file && g.file.size === m.size && same(g.file.sha, m.sha256)) {
      this.ackIn(g, true); // the same file again, resumed
      return;
    }
    g.file = { path: m.path, size: m.size, sha: m.sha256.slice(), parts: [] };
    if (g.count === 1) g.name = m.path.split('/').pop();
    g.written = 0;
    if (m.size === 0) this.fileWhole(g);
  }

  data(m) {
    const g = this.in.get(m.group);
    if (!g) return;
    if (!g.file || m.file !== g.cur || m.offset !== g.written) {
      if (g.ackSent !== g.written || !g.toldGap) {
        g.toldGap = true;
        this.ackIn(g, true);
      }
      return;
    }
    g.toldGap = false;
    if (m.len > g.file.size - g.written) {
      const why = `file ${g.cur}: more bytes than it was offered with`;
      this.send('file_done', { group: g.id, status: FILES.failed, file: g.cur, text: why });
      this.finish(g, FILES.failed, why);
      return;
    }
    g.file.parts.push(m.data.slice());
    g.written += m.len;
    g.rate.add(m.len);
    if (g.written === g.file.size) this.fileWhole(g);
    else if (g.written - g.ackSent >= FILES.ackEvery) this.ackIn(g);
    this.show();
  }

  async fileWhole(g) {
    const f = g.file;
    const blob = new Blob(f.parts, { type: g.kind === FILES.print ? 'application/pdf' : '' });
    f.parts = [];
    if (!same(await sha256(await blob.arrayBuffer()), f.sha)) {
      const why = `file ${g.cur} came with another SHA-256 than it was offered with`;
      this.send('file_done', { group: g.id, status: FILES.failed, file: g.cur, text: why });
      this.finish(g, FILES.failed, why);
      return;
    }
    this.hand(blob, f.path.replaceAll('/', '_'), g.kind);
    g.done += f.size;
    g.file = null;
    g.cur++;
    g.written = 0;
    this.ackIn(g);
    if (g.cur === g.count) {
      const text = g.kind === FILES.print ? 'opened in the browser to print'
        : 'saved as the browser\'s download';
      this.send('file_done', { group: g.id, status: FILES.whole, file: g.cur, text });
      this.finish(g, FILES.whole, text);
    }
  }

  // To the browser: a download, or a print opened in its PDF viewer (its
  // print button there), where the browser lets the page open a tab
  // unasked; else, and always, a row with "print" and "save" in the panel,
  // whose click it lets open one.
  hand(blob, name, kind) {
    const url = URL.createObjectURL(blob);
    if (kind === FILES.print) {
      const shown = window.open(url, '_blank');
      const p = { name, url, opened: Boolean(shown), type: blob.type, size: blob.size, head: '' };
      blob.slice(0, 8).text().then((h) => { p.head = h; });
      this.prints.unshift(p);
      for (const old of this.prints.splice(4)) URL.revokeObjectURL(old.url);
      this.show();
      return;
    } else {
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
    }
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    this.downloads = (this.downloads || 0) + 1;
  }

  openPrint(p) {
    p.opened = Boolean(window.open(p.url, '_blank')) || p.opened;
    this.show();
  }

  savePrint(p) {
    const a = document.createElement('a');
    a.href = p.url;
    a.download = p.name;
    document.body.append(a);
    a.click();
    a.remove();
  }

  note(text) {
    this.ended.unshift({ id: 0, name: '', status: FILES.refused, text });
    this.ended.length = Math.min(this.ended.length, 4);
    this.show();
  }

  // A group's figures, for the panel and the HUD.
  figures(g) {
    const sending = this.out.has(g.id);
    return {
      sending,
      name: sending ? (g.files.length > 1 ? `${g.files.length} files` : g.files[0].path) : g.name,
      done: sending ? g.done + g.acked : g.done + g.written,
      total: g.bytes,
      rate: g.rate.perSecond(),
    };
  }

  // The HUD's words on each group under way ('' for none).
  hudText() {
    return [...this.out.values(), ...this.in.values()].filter((g) => !g.asking).map((g) => {
      const f = this.figures(g);
      const left = f.rate && this.linkUp ? ` ${Math.ceil((f.total - f.done) / f.rate)} s left` : '';
      return `${f.sending ? '\u2191' : '\u2193'} ${f.name} ${mb(f.done)}/${mb(f.total)} MB ` +
        (this.linkUp ? `${(f.rate * 8 / 1e6).toFixed(1)} Mbit/s${left}` : 'waiting for the link');
    }).join('  ');
  }

  // The panel: each group under way with its bar, and what became of the
  // last ones.
  show() {
    this.session.hud?.filesChanged();
    const groups = [...this.out.values(), ...this.in.values()];
    if (!groups.length && !this.ended.length && !this.prints.length) {
      this.panel?.remove();
      this.panel = null;
      return;
    }
    if (!this.panel) {
      this.panel = document.createElement('div');
      this.panel.id = 'rcomp-files';
      this.panel.className = 'rcomp-keep-keys';
      this.panel.setAttribute('role', 'status');
      document.body.append(this.panel);
    }
    const rows = [];
    for (const g of groups) {
      const { sending, name, done, total, rate } = this.figures(g);
      const left = rate ? ` · ${Math.ceil((total - done) / rate)} s left` : '';
      const row = document.createElement('div');
      row.className = 'rcomp-file';
      row.dataset.group = String(g.id);
      if (g.asking) {
        const what = document.createElement('span');
        what.textContent = `\u2193 ${g.count > 1 ? `${g.count} files` : 'a file'} ` +
          `(${mb(g.bytes)} MB) from the session${g.kind === FILES.print ? ', a print' : ''}: take ` +
          `${g.count > 1 ? 'them' : 'it'}?`;
        const yes = document.createElement('button');
        yes.type = 'button';
        yes.textContent = g.kind === FILES.print ? 'open' : 'save';
        yes.dataset.answer = 'yes';
        yes.addEventListener('click', () => this.answer(g.id, true));
        const no = document.createElement('button');
        no.type = 'button';
        no.textContent = 'refuse';
        no.dataset.answer = 'no';
        no.addEventListener('click', () => this.answer(g.id, false));
        row.append(what, yes, no);
        rows.push(row);
        continue;
      }
      const bar = document.createElement('progress');
      bar.max = total || 1;
      bar.value = done;
      const what = document.createElement('span');
      what.textContent = `${sending ? '\u2191' : '\u2193'} ${name}: ${mb(done)} of ${mb(total)} MB` +
        (this.linkUp ? ` · ${(rate * 8 / 1e6).toFixed(1)} Mbit/s${left}` : ' · waiting for the link');
      const cancel = document.createElement('button');
      cancel.type = 'button';
      cancel.textContent = 'cancel';
      cancel.dataset.cancel = String(g.id);
      cancel.addEventListener('click', () => this.cancel(g.id));
      row.append(what, bar, cancel);
      rows.push(row);
    }
    for (const e of this.ended) {
      const row = document.createElement('div');
      row.className = 'rcomp-file rcomp-file-ended';
      row.dataset.ended = ['whole', 'cancelled', 'refused', 'failed'][e.status] || 'failed';
      row.textContent = e.name ? `${e.name}: ${e.text}` : e.text;
      rows.push(row);
    }
    for (const p of this.prints) {
      const row = document.createElement('div');
      row.className = 'rcomp-file rcomp-print';
      row.dataset.print = p.name;
      const what = document.createElement('span');
      what.textContent = `\u{1F5B6} ${p.name}: printed in the session` +
        (p.opened ? ', opened in a tab' : '');
      const print = document.createElement('button');
      print.type = 'button';
      print.textContent = 'print';
      print.title = 'open it in the browser, ready to print';
      print.dataset.printOpen = p.name;
      print.addEventListener('click', () => this.openPrint(p));
      const save = document.createElement('button');
      save.type = 'button';
      save.textContent = 'save';
      save.dataset.printSave = p.name;
      save.addEventListener('click', () => this.savePrint(p));
      row.append(what, print, save);
      rows.push(row);
    }
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'rcomp-files-close';
    close.textContent = '\u2715';
    close.title = 'clear what has ended';
    close.addEventListener('click', () => {
      this.ended = [];
      for (const p of this.prints.splice(0)) URL.revokeObjectURL(p.url);
      this.show();
    });
    this.panel.replaceChildren(close, ...rows);
  }

  // For the tests and the HUD: each group under way.
  stats() {
    return [...this.out.values()].map((g) => ({ id: g.id, sending: true, done: g.done + g.acked, total: g.bytes }))
      .concat([...this.in.values()].map((g) => ({ id: g.id, sending: false, done: g.done + g.written, total: g.bytes, asking: Boolean(g.asking) })))
      .concat(this.ended.map((e) => ({ id: e.id, ended: e.status, text: e.text })));
  }
}

// Bytes a second over the last two seconds.
class Rate {
  constructor() {
    this.at = performance.now();
    this.now = 0;
    this.last = 0;
  }

  add(n) {
    this.roll();
    this.now += n;
  }

  roll() {
    const t = performance.now();
    if (t - this.at >= 1000) {
      this.last = t - this.at < 2000 ? this.now : 0;
      this.now = 0;
      this.at = t;
    }
  }

  perSecond() {
    this.roll();
    return this.last;
  }
}

// The files of a drop: each of the browser's DataTransfer items, folders
// walked whole (webkitGetAsEntry), as [{file, path}].
export async function droppedFiles(dataTransfer) {
  const items = [];
  const entries = [...(dataTransfer.items || [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) {
    for (const file of dataTransfer.files || []) items.push({ file, path: cleanName(file.name) });
    return items;
  }
  const walk = async (entry, prefix) => {
    const path = prefix ? `${prefix}/${cleanName(entry.name)}` : cleanName(entry.name);
    if (entry.isFile) {
      items.push({ file: await new Promise((ok, no) => entry.file(ok, no)), path });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, no) => reader.readEntries(ok, no));
        if (!batch.length) break;
        for (const e of batch) await walk(e, path);
      }
    }
  };
  for (const e of entries) await walk(e, '');
  return items;
}

// The files an <input type=file> (webkitdirectory or not) gave.
export function pickedFiles(list) {
  return [...list].map((file) => ({
    file, path: (file.webkitRelativePath || file.name).split('/').map(cleanName).join('/'),
  }));
}
