// The wire format in the page: messages encoded and decoded from the table
// the build generates from wire/messages.h (messages.js), each field
// checked as wire.c checks it, and the records that carry them.
import { HEADER_SIZE, MAX_BODY, MESSAGES, RECORD } from './messages.js';

const BY_CODE = new Map(Object.entries(MESSAGES).map(([name, m]) => [m.code, { name, ...m }]));
const SIZES = { u8: 1, u16: 2, u32: 4, i32: 4, u64: 8 };
export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

// One message's body from its fields, as wire.c writes it.
export function encode(name, values) {
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
  const msg = { message: m.name }; // no field is called message (gen-messages checks)
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
export class Reader {
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

// One message in records of its class, ready to send.
export function inRecords(cls, msg) {
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
  return out.subarray(0, o);
}

// MIME types as selection, dnd_enter and drag_start carry them: each a u16
// length and its bytes.
export function mimeList(types) {
  const parts = types.map((t) => encoder.encode(t));
  const out = new Uint8Array(parts.reduce((n, p) => n + 2 + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out[o] = p.length & 0xff;
    out[o + 1] = p.length >> 8;
    out.set(p, o + 2);
    o += 2 + p.length;
  }
  return out;
}

export function parseMimeList(bytes, count) {
  const types = [];
  let o = 0;
  for (let i = 0; i < count; i++) {
    if (o + 2 > bytes.length) throw new Error('MIME types past the body');
    const n = bytes[o] | (bytes[o + 1] << 8);
    if (n < 1 || o + 2 + n > bytes.length) throw new Error('a MIME type past the body');
    types.push(decoder.decode(bytes.subarray(o + 2, o + 2 + n)));
    o += 2 + n;
  }
  if (o !== bytes.length) throw new Error('MIME types do not fill the body');
  return types;
}
