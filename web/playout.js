// The page's sound playout, on the audio thread: what the decoder gave,
// played with a bounded delay and no clicks (see sound.js).
const TARGET = 0.04; // seconds held before playing starts
const HIGH = 0.1; // past target + this, play faster
const FAST = 1.02; // that much faster: 2%, unheard
const FADE = 64; // samples of a fade in or out

class Playout extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = []; // [left, right] Float32Arrays
    this.offset = 0; // read position in queue[0], fractional when fast
    this.held = 0; // samples queued, less offset
    this.playing = false;
    this.ended = false;
    this.gain = 0;
    this.last = [0, 0];
    this.counts = { underruns: 0, playedMs: 0 };
    this.reported = 0;
    this.port.onmessage = (e) => {
      if (e.data.end) {
        this.ended = true;
        return;
      }
      this.ended = false;
      this.queue.push(e.data.planes);
      this.held += e.data.planes[0].length;
    };
  }

  // The sample of channel c at the read position.
  sample(c) {
    let i = Math.floor(this.offset);
    for (const q of this.queue) {
      if (i < q[c].length) return q[c][i];
      i -= q[c].length;
    }
    return this.last[c];
  }

  advance(n) {
    this.offset += n;
    this.held -= n;
    while (this.queue.length && this.offset >= this.queue[0][0].length) {
      this.offset -= this.queue[0][0].length;
      this.queue.shift();
    }
  }

  process(inputs, outputs) {
    const out = outputs[0];
    const frames = out[0].length;
    if (!this.playing && this.held >= TARGET * sampleRate) {
      this.playing = true;
      this.gain = 0;
    }
    const step = this.held > (TARGET + HIGH) * sampleRate ? FAST : 1;
    for (let i = 0; i < frames; i++) {
      if (this.playing && this.held < 1 + step) {
        // Dry: fade what last played down to silence, then wait to refill.
        this.playing = false;
        if (!this.ended) this.counts.underruns++;
      }
      const live = this.playing;
      const target = live ? 1 : 0;
      this.gain += Math.sign(target - this.gain) * Math.min(Math.abs(target - this.gain), 1 / FADE);
      for (let c = 0; c < out.length; c++) {
        const v = live ? this.sample(Math.min(c, 1)) : this.last[Math.min(c, 1)];
        if (live) this.last[Math.min(c, 1)] = v;
        out[c][i] = v * this.gain;
      }
      if (!live) {
        this.last[0] *= 1 - 1 / FADE;
        this.last[1] *= 1 - 1 / FADE;
      }
      if (live) this.advance(step);
    }
    if (this.playing) this.counts.playedMs += (frames / sampleRate) * 1000;
    if (currentTime - this.reported > 0.25) {
      this.reported = currentTime;
      this.port.postMessage({
        underruns: this.counts.underruns, playedMs: Math.round(this.counts.playedMs),
        bufferedMs: Math.round((this.held / sampleRate) * 1000), state: this.playing ? 'playing' : 'waiting',
      });
    }
    return true;
  }
}

registerProcessor('rcomp-playout', Playout);
