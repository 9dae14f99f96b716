// The wire format in the page: messages encoded and decoded from the table
// the build generates from protocol/messages.h (messages.js), each field
// checked as wire.c checks it, each message's check across fields by the
// name its row gives (CHECKS, wire.c's check_NAME), each on a class its
// row says may carry it, and the records that carry them.
import { FRAME, GRAB, HEADER_SIZE, LIMITS, MAGIC, MAX_BODY, MESSAGES, RECORD, RECT_SIZE,
  TEXT_INPUT } from './messages.js';

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

// The checks across fields, by the names messages.h's rows give them: the
// same as wire.c's check_NAME, each throwing what is wrong.
const SESSION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

function mimeTypesFit(count, packed) {
  let pos = 0;
  for (let n = 0; n < count; n++) {
    const left = packed.length - pos;
    const len = left < 2 ? 0 : packed[pos] | (packed[pos + 1] << 8);
    if (len === 0 || len > LIMITS.maxMime || len > left - 2) return false;
    pos += 2 + len;
  }
  return pos === packed.length;
}

function oneAction(v, what) {
  if (v & (v - 1)) throw new Error(`${what} names more than one action`);
}

export const CHECKS = {
  hello(m) {
    if (m.magic !== MAGIC) throw new Error('hello has bad magic: the peer does not speak rcomp');
  },
  welcome(m) {
    if (m.magic !== MAGIC) throw new Error('welcome has bad magic: the peer does not speak rcomp');
    if (!SESSION_NAME.test(m.name) || m.name.length !== m.name_len) {
      throw new Error('welcome has a session name that is not [A-Za-z0-9._-]');
    }
  },
  keys(m) {
    const v = new DataView(m.keys.buffer, m.keys.byteOffset, m.keys.byteLength);
    for (let i = 0; i < m.nkeys; i++) {
      if (v.getUint32(i * 4, true) > 0xffff) throw new Error('keyboard_enter has key code out of range');
    }
  },
  popup_parent(m) {
    if (m.window === m.parent) throw new Error(`popup ${m.window} is its own parent`);
  },
  copy_rect(m) {
    if (m.dx === 0 && m.dy === 0) throw new Error(`copy_rect of window ${m.window} moves nothing`);
    if (m.x + m.width > LIMITS.maxDim || m.y + m.height > LIMITS.maxDim) {
      throw new Error(`copy_rect of window ${m.window} reaches past ${LIMITS.maxDim} pixels`);
    }
  },
  text_input(m) {
    if (m.cursor > m.text_len || m.anchor > m.text_len) {
      throw new Error(`text_input of window ${m.window}: cursor or anchor past its text`);
    }
  },
  preedit(m) {
    if (!(m.flags & TEXT_INPUT.preedit) && m.preedit_len !== 0) {
      throw new Error('text_input_event: preedit text without the preedit flag');
    }
    if (m.preedit_cursor_begin > m.preedit_len || m.preedit_cursor_end > m.preedit_len) {
      throw new Error('text_input_event: preedit cursor past its bytes');
    }
  },
  grab_edges(m) {
    const bad = m.kind === GRAB.resize
      ? m.edges === 0 || (m.edges & 3) === 3 || (m.edges & 12) === 12 : m.edges !== 0;
    if (bad) throw new Error(`window_grab of window ${m.window} with edges ${m.edges}`);
  },
  window_parent(m) {
    if (m.parent === m.window) throw new Error(`window ${m.window} is its own parent`);
  },
  pixels(m) {
    const what = m.message === 'cursor' ? 'cursor' : 'drag icon';
    if ((m.width === 0) !== (m.height === 0)) throw new Error(`${what} size is empty on one side only`);
    if (m.pixels.length !== m.width * m.height * 4) throw new Error(`${what} pixels are not its size`);
  },
  mime_types(m) {
    if (!mimeTypesFit(m.count, m.types)) throw new Error(`${m.message} MIME types do not match their count`);
  },
  one_action(m) {
    oneAction(m.message === 'dnd_status' ? m.preferred : m.action, m.message);
  },
  frame(m) {
    if (m.width * m.height > LIMITS.maxPixels) throw new Error('frame size is more than the most pixels');
    const v = new DataView(m.rects.buffer, m.rects.byteOffset, m.rects.byteLength);
    const rects = [];
    let area = 0;
    for (let i = 0; i < m.nrects; i++) {
      const r = {
        x: v.getInt32(i * RECT_SIZE, true), y: v.getInt32(i * RECT_SIZE + 4, true),
        w: v.getInt32(i * RECT_SIZE + 8, true), h: v.getInt32(i * RECT_SIZE + 12, true),
      };
      if (r.x < 0 || r.y < 0 || r.w < 1 || r.h < 1 || r.x + r.w > m.width || r.y + r.h > m.height) {
        throw new Error('a frame rectangle outside the frame');
      }
      // Rectangles may touch but not overlap: a frame carries no pixel twice.
      for (const o of rects) {
        if (r.x < o.x + o.w && o.x < r.x + r.w && r.y < o.y + o.h && o.y < r.y + r.h) {
          throw new Error('frame rectangles overlap');
        }
      }
      rects.push(r);
      area += r.w * r.h;
    }
    if (area * 4 !== m.raw_size) throw new Error('a frame whose raw size is not its rectangles');
    if (m.codec === FRAME.codecH264) {
      if (m.compression !== FRAME.none || m.nrects !== 0 || m.payload.length === 0 ||
        (m.flags & FRAME.replace)) {
        throw new Error('a video frame must have no rectangles, no compression, no replace flag and a payload');
      }
    } else if (m.compression === FRAME.none && m.payload.length !== m.raw_size) {
      throw new Error('an uncompressed frame payload of the wrong size');
    }
  },
};

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
  if (m.check) CHECKS[m.check](msg);
  return msg;
}

// Messages out of a byte stream (one per class): header, then body. The
// pieces are joined once a message is whole, not as each arrives: a big
// frame comes in many records. cls: the record class it reads (a message
// its row says that class may not carry is refused); null for the server's
// first message, which comes on its own, outside any record. from: who
// sends what it reads ('SERVER' for the page; 'VIEWER' to read as
// rcomp-run does, as the tests do).
export class Reader {
  constructor(cls = null, from = 'SERVER') {
    this.chunks = [];
    this.length = 0;
    this.cls = cls;
    this.from = from;
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
    if (this.length < 2) return null;
    // A message on a class that may not carry it is refused from its type
    // alone (a type nobody knows, on any class but control).
    const start = this.join(2);
    const code = start[0] | (start[1] << 8);
    const m = BY_CODE.get(code);
    if (this.cls !== null && (m ? !((m.carries >> this.cls) & 1) : this.cls !== RECORD.control)) {
      throw new Error(`a ${m ? m.name : 'unknown'} message on record class ${this.cls}`);
    }
    if (this.length < HEADER_SIZE) return null;
    const head = this.join(HEADER_SIZE);
    const h = new DataView(head.buffer, head.byteOffset, HEADER_SIZE);
    const length = h.getUint32(4, true);
    if (!m) throw new Error('unknown message type 0x' + code.toString(16));
    if (m.sender !== 'BOTH' && m.sender !== this.from) {
      throw new Error(`a ${m.name} message may not be sent by a ${this.from.toLowerCase()}`);
    }
    if (h.getUint16(2, true) !== 0) throw new Error('reserved header flags set');
    // A length outside the message's bounds is refused from the header
    // alone, before its body is waited for.
    if (length > MAX_BODY || length < m.minBody || length > m.maxBody) {
      throw new Error(`${m.name} message has body length ${length}, allowed ${m.minBody} to ${m.maxBody}`);
    }
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
