// The browser viewer: one WebSocket to rcomp-run carrying the wire protocol
// as rcomp-view speaks it (protocol/PROTOCOL.md), each remote toplevel a
// window in the page. The messages' layout comes from messages.js, which
// the build generates from protocol/messages.h.
import { CAPS, FRAME, HEADER_SIZE, MAGIC, MAX_BODY, MESSAGES, RECORD, RECT_SIZE, VERSION_MAJOR,
  VERSION_MINOR } from './messages.js';
import { lz4Decode } from './lz4.js';

const HELLO_SHARE = 1 << 1;
const HELLO_VIEW_ONLY = 1 << 2;
const LINK_ACK_EVERY = 1024; // record bytes read between two link_acks
const BY_CODE = new Map(Object.entries(MESSAGES).map(([name, m]) => [m.code, { name, ...m }]));
const SIZES = { u8: 1, u16: 2, u32: 4, i32: 4, u64: 8 };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function params() {
  const p = new URLSearchParams(location.hash.slice(1));
  return {
    token: p.get('token') || '',
    share: p.get('share') === '1',
    viewOnly: p.get('view-only') === '1',
  };
}

// One message's body from its fields, as wire.c writes it.
function encode(name, values) {
  const m = MESSAGES[name];
  const parts = [];
  const fixed = new DataView(new ArrayBuffer(m.fixed));
  let at = 0;
  for (const f of m.fields) {
    if (f.rest) {
      const v = values[f.rest] || new Uint8Array(0);
      parts.push(typeof v === 'string' ? encoder.encode(v) : v);
      continue;
    }
    let v = values[f.name];
    if (f.count) {
      const a = values[f.count.array] || new Uint8Array(0);
      const bytes = typeof a === 'string' ? encoder.encode(a) : a;
      parts.push(bytes);
      v = bytes.length / f.count.size;
    }
    put(fixed, at, f.type, v || 0);
    at += SIZES[f.type];
  }
  const length = m.fixed + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(HEADER_SIZE + length);
  const h = new DataView(out.buffer);
  h.setUint16(0, m.code, true);
  h.setUint16(2, 0, true);
  h.setUint32(4, length, true);
  out.set(new Uint8Array(fixed.buffer), HEADER_SIZE);
  let o = HEADER_SIZE + m.fixed;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function put(view, at, type, v) {
  switch (type) {
    case 'u8': view.setUint8(at, v); break;
    case 'u16': view.setUint16(at, v, true); break;
    case 'u32': view.setUint32(at, v >>> 0, true); break;
    case 'i32': view.setInt32(at, v, true); break;
    case 'u64': view.setBigUint64(at, BigInt(Math.max(0, Math.floor(v))), true); break;
    default: throw new Error('unknown field type ' + type);
  }
}

function get(view, at, type) {
  switch (type) {
    case 'u8': return view.getUint8(at);
    case 'u16': return view.getUint16(at, true);
    case 'u32': return view.getUint32(at, true);
    case 'i32': return view.getInt32(at, true);
    case 'u64': return Number(view.getBigUint64(at, true));
    default: throw new Error('unknown field type ' + type);
  }
}

// A body into its fields, each checked as wire.c checks it.
function decode(m, body) {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  if (body.length < m.fixed) throw new Error(m.name + ': body shorter than its fixed part');
  const msg = { type: m.name };
  const counts = [];
  let at = 0;
  for (const f of m.fields) {
    if (f.rest) continue;
    const v = get(view, at, f.type);
    at += SIZES[f.type];
    if (f.min !== null && (v < f.min || v > f.max)) {
      throw new Error(`${m.name}.${f.name} = ${v} is out of range`);
    }
    if (f.mask != null && (v & ~f.mask)) throw new Error(`${m.name}.${f.name} has reserved bits`);
    msg[f.name] = v;
    if (f.count) counts.push([f.count, v]);
  }
  let o = m.fixed;
  for (const [c, n] of counts) {
    const len = n * c.size;
    if (o + len > body.length) throw new Error(m.name + ': arrays past the body');
    const bytes = body.subarray(o, o + len);
    msg[c.array] = c.text ? decoder.decode(bytes) : bytes;
    o += len;
  }
  const rest = m.fields.find((f) => f.rest);
  if (rest) {
    const bytes = body.subarray(o);
    if (bytes.length < rest.min || bytes.length > rest.max) throw new Error(m.name + ': rest out of range');
    msg[rest.rest] = rest.text ? decoder.decode(bytes) : bytes;
    msg[rest.len] = bytes.length;
  } else if (o !== body.length) {
    throw new Error(m.name + ': body length differs from its fields');
  }
  return msg;
}

// Messages out of a byte stream (one per class): header, then body. The
// pieces are joined once a message is whole, not as each arrives: a big
// frame comes in many records.
class Reader {
  constructor() {
    this.chunks = [];
    this.length = 0;
  }
  push(bytes) {
    if (!bytes.length) return;
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
  // The first n bytes in one piece (n <= length).
  join(n) {
    if (this.chunks[0].length >= n) return this.chunks[0];
    const b = new Uint8Array(this.length);
    let o = 0;
    for (const c of this.chunks) {
      b.set(c, o);
      o += c.length;
    }
    this.chunks = [b];
    return b;
  }
  // What is left, in one piece.
  rest() {
    return this.length ? this.join(this.length) : new Uint8Array(0);
  }
  next() {
    if (this.length < HEADER_SIZE) return null;
    const head = this.join(HEADER_SIZE);
    const h = new DataView(head.buffer, head.byteOffset, HEADER_SIZE);
    const code = h.getUint16(0, true);
    const length = h.getUint32(4, true);
    const m = BY_CODE.get(code);
    if (!m || m.sender === 'VIEWER') throw new Error('unknown message type 0x' + code.toString(16));
    if (h.getUint16(2, true) !== 0) throw new Error('reserved header flags set');
    if (length > MAX_BODY) throw new Error('message too long');
    if (this.length < HEADER_SIZE + length) return null;
    const all = this.join(HEADER_SIZE + length);
    const body = all.subarray(HEADER_SIZE, HEADER_SIZE + length);
    this.chunks[0] = all.subarray(HEADER_SIZE + length);
    if (!this.chunks[0].length) this.chunks.shift();
    this.length -= HEADER_SIZE + length;
    return decode(m, body);
  }
}

class Session {
  constructor(desk) {
    this.desk = desk;
    this.windows = new Map();
    this.z = 1;
    this.placed = 0;
  }

  start() {
    const p = params();
    this.p = p;
    if (!p.token) {
      this.error('no token: open this page as http://HOST:PORT/#token=TOKEN');
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/`, 'rcomp');
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.first = new Reader();
    this.welcomed = false;
    this.classes = Array.from({ length: 6 }, () => new Reader());
    this.pending = new Uint8Array(0); // record bytes not yet a whole record
    this.received = 0;
    this.acked = 0;
    ws.onopen = () => {
      let flags = 0;
      if (p.share) flags |= HELLO_SHARE;
      if (p.viewOnly) flags |= HELLO_VIEW_ONLY | HELLO_SHARE;
      ws.send(encode('hello', {
        magic: MAGIC, major: VERSION_MAJOR, minor: VERSION_MINOR,
        caps: CAPS.lz4 | CAPS.replace, flags, token: p.token,
      }));
      this.status('connecting');
    };
    ws.onmessage = (e) => {
      try {
        this.read(new Uint8Array(e.data));
      } catch (err) {
        this.error('protocol error: ' + err.message);
        ws.close();
      }
    };
    ws.onclose = () => {
      if (!this.ended) this.status('the link closed');
    };
  }

  read(bytes) {
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

  send(name, values, cls = RECORD.control) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    const msg = encode(name, values);
    const out = new Uint8Array(msg.length + Math.ceil(msg.length / RECORD.max) * RECORD.header);
    let o = 0;
    for (let at = 0; at < msg.length; at += RECORD.max) {
      const n = Math.min(RECORD.max, msg.length - at);
      out[o] = cls;
      out[o + 1] = 0;
      out[o + 2] = n & 0xff;
      out[o + 3] = n >> 8;
      out.set(msg.subarray(at, at + n), o + RECORD.header);
      o += RECORD.header + n;
    }
    this.ws.send(out.subarray(0, o));
  }

  handle(m) {
    switch (m.type) {
      case 'welcome':
        this.status('session ' + m.name);
        break;
      case 'goodbye':
        this.ended = true;
        this.error(m.text || 'the session said goodbye');
        break;
      case 'window_new':
      case 'popup_new':
        this.windowNew(m);
        break;
      case 'window_title': {
        const w = this.windows.get(m.window);
        if (w) this.setTitle(w, m.text);
        break;
      }
      case 'window_app_id': {
        const w = this.windows.get(m.window);
        if (w) w.el.dataset.appId = m.text;
        break;
      }
      case 'window_destroy': {
        const w = this.windows.get(m.window);
        if (w) {
          w.el.remove();
          this.windows.delete(m.window);
        }
        break;
      }
      case 'frame':
        this.frame(m);
        break;
      default:
        break; // not yet shown in the page
    }
  }

  windowNew(m) {
    const el = document.createElement('div');
    el.className = 'rcomp-window';
    const bar = document.createElement('div');
    bar.className = 'rcomp-title';
    const title = document.createElement('span');
    const close = document.createElement('span');
    close.className = 'rcomp-close';
    close.textContent = '\u2715';
    bar.append(title, close);
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, m.width);
    canvas.height = Math.max(1, m.height);
    el.append(bar, canvas);
    el.style.left = (16 + 24 * this.placed) + 'px';
    el.style.top = (16 + 24 * this.placed) + 'px';
    el.style.zIndex = this.z++;
    this.placed = (this.placed + 1) % 10;
    const w = {
      id: m.window, el, canvas, title, ctx: canvas.getContext('2d'),
      pixels: null, width: 0, height: 0, presented: 0,
    };
    el.dataset.appId = m.app_id || '';
    this.setTitle(w, m.title || '');
    this.windows.set(m.window, w);
    this.desk.append(el);
    el.addEventListener('pointerdown', () => { el.style.zIndex = this.z++; });
    close.addEventListener('click', () => this.send('close', { window: m.window }));
    this.send('output_info', { window: m.window, refresh_mhz: 60000, scale: 1 });
  }

  setTitle(w, text) {
    w.title.textContent = text;
    w.el.dataset.title = text;
  }

  // A lossless frame (protocol/PROTOCOL.md, "frame"): rectangles of new
  // pixels, or of pixels XORed with the window's, kept in wire order
  // (little-endian ARGB, premultiplied) and shown as the canvas's RGBA.
  frame(m) {
    const w = this.windows.get(m.window);
    if (!w) return;
    if (m.codec !== FRAME.codecXor) {
      throw new Error('video frames are not yet shown in the page');
    }
    if ((m.flags & FRAME.reset) || m.width !== w.width || m.height !== w.height) {
      if (!(m.flags & FRAME.reset)) throw new Error('a frame of a new size without reset');
      w.width = m.width;
      w.height = m.height;
      w.pixels = new Uint8Array(m.width * m.height * 4);
      w.canvas.width = m.width;
      w.canvas.height = m.height;
      w.image = w.ctx.createImageData(m.width, m.height);
    }
    const rects = [];
    let area = 0;
    for (let i = 0; i < m.nrects; i++) {
      const v = new DataView(m.rects.buffer, m.rects.byteOffset + i * RECT_SIZE, RECT_SIZE);
      const r = { x: v.getInt32(0, true), y: v.getInt32(4, true), w: v.getInt32(8, true), h: v.getInt32(12, true) };
      if (r.x < 0 || r.y < 0 || r.w < 1 || r.h < 1 || r.x + r.w > m.width || r.y + r.h > m.height) {
        throw new Error('a frame rectangle outside the frame');
      }
      rects.push(r);
      area += r.w * r.h;
    }
    if (m.raw_size !== area * 4) throw new Error('a frame whose payload is not its rectangles');
    let raw;
    if (m.compression === FRAME.none) raw = m.payload;
    else if (m.compression === FRAME.lz4) raw = lz4Decode(m.payload, m.raw_size);
    else throw new Error('a frame in a compression this page did not ask for');
    if (raw.length !== m.raw_size) throw new Error('a frame payload of the wrong size');
    const replace = (m.flags & FRAME.replace) !== 0;
    const px = w.pixels;
    const img = w.image.data;
    let o = 0;
    for (const r of rects) {
      for (let y = r.y; y < r.y + r.h; y++) {
        let p = (y * m.width + r.x) * 4;
        for (let x = 0; x < r.w; x++, p += 4, o += 4) {
          if (replace) {
            px[p] = raw[o]; px[p + 1] = raw[o + 1]; px[p + 2] = raw[o + 2]; px[p + 3] = raw[o + 3];
          } else {
            px[p] ^= raw[o]; px[p + 1] ^= raw[o + 1]; px[p + 2] ^= raw[o + 2]; px[p + 3] ^= raw[o + 3];
          }
          const a = px[p + 3];
          if (a === 255 || a === 0) {
            img[p] = px[p + 2]; img[p + 1] = px[p + 1]; img[p + 2] = px[p];
          } else {
            img[p] = Math.min(255, Math.round(px[p + 2] * 255 / a));
            img[p + 1] = Math.min(255, Math.round(px[p + 1] * 255 / a));
            img[p + 2] = Math.min(255, Math.round(px[p] * 255 / a));
          }
          img[p + 3] = a;
        }
      }
      w.ctx.putImageData(w.image, 0, 0, r.x, r.y, r.w, r.h);
    }
    w.presented++;
    w.codec = 'lossless';
    this.send('frame_ack', { window: m.window, seq: m.seq, recv_time_us: performance.now() * 1000 });
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
      window: w.id, title: w.el.dataset.title, appId: w.el.dataset.appId,
      width: w.width, height: w.height, presented: w.presented, codec: w.codec || '',
    }));
  }
}

const session = new Session(document.getElementById('rcomp-desk'));
window.rcomp = { stats: () => session.stats() };
session.start();
