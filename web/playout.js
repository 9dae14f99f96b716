// The page's sound playout, on the audio thread: the decoder's samples
// played with a bounded delay, the link's stalls stood in for, and no
// clicks. It keeps rcomp-view's rules (media/playout.h): what waits is
// held near a target plus a margin the link's jitter has shown, by playing
// up to 2% faster or slower; the margin grows by the longest stand-in a
// second needed and, after calm seconds, shrinks by half of what those
// seconds never used (the least that waited in them); sound is thrown
// away only past a limit. (rcomp-view's margin shrinks by a quarter after
// four calm seconds whatever they used: over a link that stalls every few
// seconds that shrank it back into stand-ins, again and again.)
// A browser's AudioDecoder has no loss concealment, so the stand-in is made
// here: the last pitch period played (found by autocorrelation) repeated,
// held for 30 ms, then faded out over 170 ms, as waveform substitution
// does; rcomp-view's Opus concealment also stops at 200 ms. Where the
// stream comes back, and where sound is thrown away, the two are
// crossfaded at the offset whose phase matches best, so neither a
// stand-in nor a cut makes a jump.
// Playout is the logic alone (tests/web/test-playout.mjs drives it in
// node); the processor at the end plays it in the page.

const TARGET = 0.03; // s waiting on average once steady, before the margin
const LIMIT = 0.25; // s waiting past this: the oldest is thrown away
const RATE_MAX = 0.02; // the most the pace moves from 1
const WINDOW = 1; // s of pace measurement
const MEMORY = 4; // calm windows before the margin shrinks
const FLOOR = 0.01; // s: the least wait a calm window is left with
const MARGIN_MAX = 0.15; // s
export const HOLD = 0.03; // s a stand-in plays at full level
export const DECAY = 0.17; // s it then takes to fade to silence (200 ms in all, as rcomp-view's)
const FADE = 128; // samples of a fade in (from silence) or out (at the end)
const XFADE = 96; // samples over which a stand-in or a cut joins the stream
const MIN_LAG = 32; // samples: pitch periods searched, 1.5 kHz ...
const MAX_LAG = 640; // ... to 75 Hz
const CORR = 192; // samples compared at each lag
const HISTORY = 1024; // samples played, kept for the search (>= MAX_LAG + CORR)
const RING = 1 << 15; // samples held at most (0.68 s at 48 kHz, past LIMIT)

// Where, from first to last, signal's n samples from there best match
// ref's first n: the offset of the highest normalized correlation.
function bestMatch(ref, signal, first, last, n) {
  let best = first;
  let bestScore = -Infinity;
  for (let d = first; d <= last; d++) {
    let dot = 0;
    let e = 0;
    for (let k = 0; k < n; k++) {
      const v = signal[d + k];
      dot += ref[k] * v;
      e += v * v;
    }
    const score = e ? dot / Math.sqrt(e) : 0;
    if (score > bestScore) {
      bestScore = score;
      best = d;
    }
  }
  return best;
}

export class Playout {
  constructor(rate, channels = 2) {
    this.sr = rate;
    this.channels = channels;
    this.ring = Array.from({ length: channels }, () => new Float32Array(RING));
    this.hist = Array.from({ length: channels }, () => new Float32Array(HISTORY));
    this.hpos = 0; // samples ever written to hist
    this.read = 0; // the stream's read position, fractional while paced
    this.write = 0; // samples ever queued
    this.mode = 'waiting'; // or 'playing', 'concealing'
    this.ended = false;
    this.pace = 1;
    this.margin = 0;
    this.fadeIn = 0; // samples of the fade in left
    this.last = new Float32Array(channels); // what played last, faded when dry
    this.seg = null; // the stand-in: one or more pitch periods, per channel
    this.lag = 0;
    this.cj = 0; // samples of the stand-in played
    this.xf = null; // a crossfade: {from: 'conceal'|'stream', at, left}
    this.window = { frames: 0, waited: 0, n: 0, deficit: 0, low: Infinity };
    this.lows = []; // the least waiting in each calm window since the last stand-in
    this.counts = { underruns: 0, concealments: 0, concealedMs: 0, droppedMs: 0, playedMs: 0 };
    this.waited = 0; // s: the mean wait of the last whole window
  }

  held() {
    return this.write - this.read;
  }

  goal() {
    return (TARGET + this.margin) * this.sr;
  }

  // Decoded samples, one Float32Array per channel, in stream order.
  push(planes) {
    this.ended = false;
    const n = planes[0].length;
    for (let c = 0; c < this.channels; c++) {
      const src = planes[Math.min(c, planes.length - 1)];
      const dst = this.ring[c];
      for (let i = 0; i < n; i++) dst[(this.write + i) % RING] = src[i];
    }
    this.write += n;
    // Nothing plays yet (a context not started, or refilling after the
    // stream ran dry): keep no backlog, the newest goal's worth.
    if (this.mode === 'waiting' && this.held() > this.goal()) this.skipTo(Math.ceil(this.write - this.goal()));
    // Past what the ring holds (never while it plays: LIMIT is far less).
    if (this.held() > RING - 2048) this.skipTo(Math.ceil(this.write - this.goal()));
  }

  // The sender's run of sound ended: play out what is held, stand in for
  // nothing after it.
  end() {
    this.ended = true;
  }

  // Thrown away up to pos.
  skipTo(pos) {
    this.counts.droppedMs += (Math.max(0, pos - this.read) / this.sr) * 1000;
    this.read = pos;
  }

  // The stream's sample of channel c at position p (linear between two).
  at(c, p) {
    const i = Math.floor(p);
    const f = p - i;
    const r = this.ring[c];
    const a = r[i % RING];
    return f ? a + (r[(i + 1) % RING] - a) * f : a;
  }

  // The stand-in's sample of channel c, j samples into it.
  standIn(c, j) {
    const hold = HOLD * this.sr;
    const g = j < hold ? 1 : Math.max(0, 1 - (j - hold) / (DECAY * this.sr));
    return this.seg[c][j % this.lag] * g;
  }

  standInOver(j) {
    return j >= (HOLD + DECAY) * this.sr;
  }

  // The period the last samples played repeat at: the lag whose CORR
  // samples best match the newest CORR (normalized correlation of the
  // channels' sum).
  pitch() {
    const avail = Math.min(this.hpos, HISTORY);
    const x = new Float32Array(avail); // newest first
    for (let k = 0; k < avail; k++) {
      const at = (this.hpos - 1 - k) % HISTORY;
      for (let c = 0; c < this.channels; c++) x[k] += this.hist[c][at];
    }
    const best = bestMatch(x, x, MIN_LAG, Math.min(MAX_LAG, avail - CORR), CORR);
    return Math.min(best, avail);
  }

  conceal() {
    this.lag = Math.max(1, this.pitch());
    this.seg = this.hist.map((h) => {
      const s = new Float32Array(this.lag);
      for (let k = 0; k < this.lag; k++) s[k] = h[(this.hpos - this.lag + k) % HISTORY];
      return s;
    });
    this.cj = 0;
    this.mode = 'concealing';
    this.counts.concealments++;
  }

  // The whole position, from `from` up to `span` samples on, where the
  // stream's next XFADE samples best match what `prev` would play next.
  aligned(from, span, prev) {
    from = Math.floor(from);
    const ahead = new Float32Array(XFADE);
    const stream = new Float32Array(span + XFADE);
    for (let c = 0; c < this.channels; c++) {
      for (let k = 0; k < XFADE; k++) ahead[k] += prev(c, k);
      const r = this.ring[c];
      for (let k = 0; k < stream.length; k++) stream[k] += r[(from + k) % RING];
    }
    const best = bestMatch(ahead, stream, 0, span, XFADE);
    return from + best;
  }

  // The stream is back while a stand-in plays: join it where the phase
  // matches, over XFADE samples.
  resume() {
    const span = Math.max(0, Math.min(this.lag, Math.floor(this.held()) - XFADE - 2));
    const j0 = this.cj;
    this.skipTo(this.aligned(this.read, span, (c, k) => this.standIn(c, j0 + k)));
    this.xf = { from: 'conceal', at: this.cj, left: XFADE };
    this.endStandIn();
    this.mode = 'playing';
  }

  endStandIn() {
    const run = this.cj / this.sr;
    this.counts.concealedMs += run * 1000;
    this.window.deficit = Math.max(this.window.deficit, run);
  }

  // Too much waits: jump ahead to the goal, crossfaded at a matching phase.
  skipAhead() {
    const lag = this.pitch();
    const want = Math.floor(this.held() - this.goal());
    const from = this.read + want;
    const span = Math.max(0, Math.min(lag, Math.floor(this.write - from) - XFADE - 2));
    const old = this.read;
    const to = this.aligned(from, span, (c, k) => this.at(c, old + k));
    this.xf = { from: 'stream', at: old, left: XFADE };
    this.skipTo(to);
  }

  // One block of output: out is an array of Float32Arrays (the
  // destination's channels), all of one length.
  render(out) {
    const frames = out[0].length;
    const sr = this.sr;
    if (this.mode === 'waiting' && this.held() >= this.goal() && this.held() >= 2) {
      this.mode = 'playing';
      this.fadeIn = FADE;
    }
    if (this.mode === 'playing' && !this.xf && this.held() > LIMIT * sr) this.skipAhead();
    const live = this.mode !== 'waiting';
    for (let i = 0; i < frames; i++) {
      if (this.mode === 'concealing' && this.held() >= Math.max(this.goal(), this.lag + XFADE + 2)) {
        this.resume();
      }
      if (this.mode === 'playing' && this.held() < 1 + this.pace) {
        this.xf = null;
        if (this.ended || this.hpos < MIN_LAG + CORR) {
          this.mode = 'waiting'; // the run's end: play out, then nothing
        } else {
          this.conceal();
        }
      }
      for (let c = 0; c < out.length; c++) {
        const ch = Math.min(c, this.channels - 1);
        let v;
        if (this.mode === 'playing') {
          v = this.at(ch, this.read);
          if (this.xf) {
            const t = 1 - this.xf.left / XFADE;
            const o = this.xf.from === 'conceal' ? this.standIn(ch, this.xf.at) : this.at(ch, this.xf.at);
            v = o * (1 - t) + v * t;
          }
          if (this.fadeIn) v *= 1 - this.fadeIn / FADE;
        } else if (this.mode === 'concealing') {
          v = this.standIn(ch, this.cj);
        } else {
          v = this.last[ch] * (1 - 1 / FADE);
        }
        if (c < this.channels) this.last[c] = v;
        out[c][i] = v;
      }
      for (let c = 0; c < this.channels; c++) this.hist[c][this.hpos % HISTORY] = this.last[c];
      this.hpos++;
      if (this.mode === 'playing') {
        this.read += this.xf ? 1 : this.pace;
        if (this.fadeIn) this.fadeIn--;
        if (this.xf) {
          this.xf.at += 1;
          if (--this.xf.left === 0) this.xf = null;
        }
      } else if (this.mode === 'concealing') {
        this.cj++;
        if (this.standInOver(this.cj)) {
          // A stall longer than a stand-in: silence, and a fresh start.
          this.endStandIn();
          this.counts.underruns++;
          this.mode = 'waiting';
          this.last.fill(0);
        }
      }
    }
    if (live) this.measure(frames);
    this.counts.playedMs += live ? (frames / sr) * 1000 : 0;
  }

  // The pace, as rcomp-view's playout_pace: over each second what waited
  // on average against the target plus the margin, half the difference
  // played away in the next second.
  measure(frames) {
    const w = this.window;
    w.frames += frames;
    w.waited += this.held() / this.sr;
    w.n++;
    w.low = Math.min(w.low, this.mode === 'playing' ? this.held() / this.sr : 0);
    if (this.mode === 'concealing') w.deficit = Math.max(w.deficit, this.cj / this.sr);
    if (w.frames < WINDOW * this.sr) return;
    if (w.deficit > 0) {
      this.margin = Math.min(MARGIN_MAX, this.margin + w.deficit);
      this.lows = [];
    } else {
      this.lows.push(w.low);
      if (this.lows.length > MEMORY) this.lows.shift();
      const unused = Math.min(...this.lows) - FLOOR;
      if (this.lows.length === MEMORY && unused > 0) this.margin -= Math.min(this.margin, unused / 2);
    }
    this.waited = w.waited / w.n;
    this.pace = 1 + Math.max(-RATE_MAX, Math.min(RATE_MAX, (this.waited - TARGET - this.margin) / 2));
    this.window = { frames: 0, waited: 0, n: 0, deficit: 0, low: Infinity };
  }

  stats() {
    const r = (v) => Math.round(v * 10) / 10;
    return {
      underruns: this.counts.underruns, concealments: this.counts.concealments,
      concealedMs: r(this.counts.concealedMs), droppedMs: r(this.counts.droppedMs),
      playedMs: Math.round(this.counts.playedMs), bufferedMs: r((this.held() / this.sr) * 1000),
      waitMs: r(this.waited * 1000), marginMs: r(this.margin * 1000),
      pace: Math.round(this.pace * 10000) / 10000, state: this.mode,
    };
  }
}

if (typeof registerProcessor === 'function') {
  registerProcessor('rcomp-playout', class extends AudioWorkletProcessor {
    constructor(options) {
      super();
      this.playout = new Playout(sampleRate, options.outputChannelCount?.[0] || 2);
      this.reported = 0;
      this.port.onmessage = (e) => {
        if (e.data.end) this.playout.end();
        else this.playout.push(e.data.planes);
      };
    }

    process(inputs, outputs) {
      this.playout.render(outputs[0]);
      if (currentTime - this.reported > 0.25) {
        this.reported = currentTime;
        this.port.postMessage(this.playout.stats());
      }
      return true;
    }
  });
}
