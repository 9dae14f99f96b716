// One WebSocket to rcomp-run, speaking the wire protocol as rcomp-view's
// connection does (protocol/PROTOCOL.md): the hello, the server's first
// message on its own, then records of RECORD.classes classes, each class a
// stream of messages it may carry; a link_ack for each RECORD.ackBytes of
// records read; and
// what one turn of the page sends in one WebSocket message. Bytes from the
// socket are untrusted: a record or message that breaks the format ends
// the connection with the reason.
import { MESSAGES, RECORD } from './messages.js';
import { Reader, encode, inRecords } from './wire.js';


// The proof that the page holds the token, shown at the WebSocket's
// upgrade (net/web-admit.h): HMAC-SHA256 of a fixed text keyed by
// the token, in hex, so that rcomp-run opens a WebSocket only for a page
// that has the token, and the token itself never travels in a header.
const PROOF_TEXT = 'rcomp browser upgrade';
const PROOF_PREFIX = 'rcomp-key.';

export async function proofOf(token) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(token),
    { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(PROOF_TEXT)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

export class Connection {
  // hello: the hello's fields; proof: proofOf(the token), or at a gate
  // (rcomp-gate) { gate: the session's name, share }, where the login's
  // cookie admits. on: opened(), message(m), failed(error), closed(event),
  // read(bytes) (how many came).
  constructor(hello, proof, on) {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = proof.gate
      ? new WebSocket(`${scheme}//${location.host}/ws?session=${encodeURIComponent(proof.gate)}` +
        (proof.share ? '&share=1' : ''), ['rcomp'])
      : new WebSocket(`${scheme}//${location.host}/`, ['rcomp', PROOF_PREFIX + proof]);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.on = on;
    this.out = [];
    this.first = new Reader();
    this.started = false; // the server's first message was read
    this.classes = Array.from({ length: RECORD.classes }, (_, cls) => new Reader(cls));
    this.pending = new Uint8Array(0); // record bytes not yet a whole record
    this.received = 0;
    this.acked = 0;
    ws.onopen = () => {
      ws.send(encode('hello', hello));
      on.opened();
    };
    ws.onmessage = (e) => {
      try {
        this.read(new Uint8Array(e.data));
      } catch (err) {
        on.failed(err);
        ws.close();
      }
    };
    ws.onclose = (e) => on.closed(e);
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  close() {
    this.ws.close();
  }

  read(bytes) {
    this.on.read(bytes.length);
    if (!this.started) {
      this.first.push(bytes);
      const m = this.first.next();
      if (!m) return;
      this.started = true;
      const rest = this.first.rest();
      this.on.message(m);
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
      if (cls >= RECORD.classes || b[o + 1] !== 0 || len < 1 || len > RECORD.max) throw new Error('bad record');
      if (b.length - o < RECORD.header + len) break;
      const reader = this.classes[cls];
      reader.push(b.subarray(o + RECORD.header, o + RECORD.header + len));
      o += RECORD.header + len;
      this.received += RECORD.header + len;
      for (let m = reader.next(); m; m = reader.next()) this.on.message(m);
    }
    this.pending = b.slice(o);
    if (this.received - this.acked >= RECORD.ackBytes) {
      this.acked = this.received;
      this.send('link_ack', { received: this.received }, RECORD.link);
    }
  }

  // Messages sent in one turn of the page go in one WebSocket message, as
  // rcomp-view writes what one event makes at once: a press and its
  // input_mark reach rcomp-run in one read, before the app can answer.
  // Each message goes on the class its row of messages.h says (cls: one of
  // those that carry it, where the sender chooses).
  send(name, values, cls = MESSAGES[name].send) {
    if (!this.open || !this.started) return;
    this.out.push(inRecords(cls, encode(name, values)));
    if (this.out.length === 1) queueMicrotask(() => this.flush());
  }

  flush() {
    const parts = this.out;
    this.out = [];
    if (!parts.length || !this.open) return;
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    this.ws.send(all);
  }
}
