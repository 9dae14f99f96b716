// The page's sound playout (web/playout.js), driven in node as the audio
// thread drives it: 10 ms chunks of decoded sound pushed as a link
// delivers them, 128-sample blocks rendered at the output's pace. What
// comes out is searched for gaps and splices as tests/rig.py's
// sound_defects searches a recording.
//   node tests/web/test-playout.mjs CASE     (meson runs each case)
import { DECAY, HOLD, Playout } from '../../web/playout.js';

const RATE = 48000;
const CHUNK = 480; // a 10 ms packet
const BLOCK = 128; // a render quantum
const AMP = 0.5;

function tone(frequency = 440) {
  let n = 0;
  return () => {
    const left = new Float32Array(CHUNK);
    for (let i = 0; i < CHUNK; i++) left[i] = AMP * Math.sin((2 * Math.PI * frequency * (n + i)) / RATE);
    n += CHUNK;
    return [left, left.slice()];
  };
}

function noise(seed = 1) {
  let s = seed;
  return () => {
    const left = new Float32Array(CHUNK);
    for (let i = 0; i < CHUNK; i++) {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      left[i] = AMP * ((s / 0x7fffffff) * 2 - 1);
    }
    return [left, left.slice()];
  };
}

// Plays seconds of a source through a playout. arrival(k): when chunk k
// reaches the page, in seconds (the sender makes one every 10 ms). Returns
// the left channel played and the playout.
function play(seconds, arrival, source = tone(), opts = {}) {
  const p = new Playout(RATE, 2);
  const out = new Float32Array(Math.round(seconds * RATE));
  let k = 0;
  const chunks = opts.chunks ?? Infinity;
  for (let at = 0; at + BLOCK <= out.length; at += BLOCK) {
    const now = at / RATE;
    while (k < chunks && arrival(k) <= now) {
      p.push(source());
      k++;
    }
    if (k >= chunks && opts.end && !p.ended) p.end();
    if (opts.before) opts.before(p, now);
    const block = [new Float32Array(BLOCK), new Float32Array(BLOCK)];
    p.render(block);
    out.set(block[0], at);
  }
  return { out, p };
}

// Gaps (5 ms windows under a tenth of the tone) and splices (a sample no
// sine of the frequency reaches from the two before it) from skip on.
function defects(out, frequency = 440, skip = 0.2, until = out.length) {
  const window = 240;
  let gaps = 0;
  for (let i = Math.round(skip * RATE); i + window <= until; i += window) {
    let peak = 0;
    for (let j = i; j < i + window; j++) peak = Math.max(peak, Math.abs(out[j]));
    if (peak < AMP / 10) gaps++;
  }
  const c = 2 * Math.cos((2 * Math.PI * frequency) / RATE);
  let splices = 0;
  let last = -window;
  for (let i = Math.round(skip * RATE) + 1; i < until - 1; i++) {
    if (Math.abs(out[i + 1] - c * out[i] + out[i - 1]) > AMP / 4 && i - last >= window) {
      splices++;
      last = i;
    }
  }
  return { gaps, splices };
}

// The lowest level of a 440 Hz tone from..to seconds: its amplitude at
// each sample, from the sample and its slope.
function envelope(out, from, to, frequency = 440) {
  const w = (2 * Math.PI * frequency) / RATE;
  let low = Infinity;
  for (let i = Math.round(from * RATE); i < Math.min(out.length - 1, to * RATE); i++) {
    const d = (out[i + 1] - out[i - 1]) / (2 * Math.sin(w));
    low = Math.min(low, Math.sqrt(out[i] * out[i] + d * d));
  }
  return low;
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const steady = (delay) => (k) => delay + k * 0.01;

const cases = {
  // A steady link: the tone comes out whole, after about the target.
  steady() {
    const { out, p } = play(5, steady(0.02));
    const d = defects(out);
    const s = p.stats();
    check(d.gaps === 0 && d.splices === 0, `defects ${JSON.stringify(d)}`);
    check(s.concealments === 0 && s.underruns === 0, `stats ${JSON.stringify(s)}`);
    check(s.waitMs > 15 && s.waitMs < 45, `waited ${s.waitMs} ms`);
  },

  // A stall longer than what is held: stood in for, no gap and no splice,
  // and the stream joined where its phase matches the stand-in's, so the
  // tone never dips below the stand-in's own level (a join at another
  // phase cancels the two for a moment).
  stall() {
    for (const ms of [40, 60, 100]) {
      // Everything sent from 1.98 s on for ms arrives at once after it.
      const first = 198;
      const after = first + ms / 10;
      const arrival = (k) => 0.02 + (k >= first && k < after ? after : k) * 0.01;
      const { out, p } = play(4, arrival);
      const d = defects(out);
      const s = p.stats();
      check(d.gaps === 0 && d.splices === 0, `${ms} ms: defects ${JSON.stringify(d)}`);
      check(s.concealments === 1 && s.concealedMs >= ms - 40 && s.underruns === 0,
        `${ms} ms: stats ${JSON.stringify(s)}`);
      const level = AMP * (1 - Math.max(0, s.concealedMs / 1000 - HOLD) / DECAY);
      const low = envelope(out, 1, 4);
      check(low >= 0.9 * level, `${ms} ms: the tone fell to ${low.toFixed(3)}, ` +
        `the stand-in's level at its end ${level.toFixed(3)}`);
    }
  },

  // A noisy signal stood in for stays bounded, and comes back without a
  // step bigger than the signal's own.
  stall_noise() {
    const arrival = (k) => Math.max(0.02 + k * 0.01, k >= 198 && k < 210 ? 2.12 : 0);
    const { out, p } = play(4, arrival, noise());
    let peak = 0;
    for (const v of out) peak = Math.max(peak, Math.abs(v));
    check(Number.isFinite(peak) && peak <= AMP * 1.01, `peak ${peak}`);
    check(p.stats().concealments >= 1, `stats ${JSON.stringify(p.stats())}`);
  },

  // A stall longer than any stand-in: the stand-in fades to silence (no
  // splice), and the stream fades back in.
  long_stall() {
    const arrival = (k) => Math.max(0.02 + k * 0.01, k >= 198 && k < 250 ? 2.52 : 0);
    const { out, p } = play(4, arrival);
    const d = defects(out);
    const s = p.stats();
    check(d.splices === 0, `defects ${JSON.stringify(d)}`);
    check(d.gaps > 60 && d.gaps < 100, `gaps ${d.gaps}`);
    check(s.underruns === 1, `stats ${JSON.stringify(s)}`);
  },

  // After a stall the margin holds more, so the same stall again needs
  // no stand-in; after calm seconds it is played away.
  margin() {
    const stalls = [[198, 210, 2.12], [598, 610, 6.12]];
    const arrival = (k) => {
      let t = 0.02 + k * 0.01;
      for (const [a, b, until] of stalls) if (k >= a && k < b) t = Math.max(t, until);
      return t;
    };
    let concealedAtSecond = null;
    let marginAfter = 0;
    const { out, p } = play(20, arrival, tone(), {
      before(pl, now) {
        if (concealedAtSecond === null && now >= 5.9) concealedAtSecond = pl.stats().concealments;
        if (now >= 6.9 && !marginAfter) marginAfter = pl.stats().marginMs;
      },
    });
    const d = defects(out);
    const s = p.stats();
    check(d.gaps === 0 && d.splices === 0, `defects ${JSON.stringify(d)}`);
    check(concealedAtSecond === 1 && s.concealments === 1,
      `stand-ins: ${concealedAtSecond} by 6 s, ${s.concealments} in all`);
    check(marginAfter > 50, `margin after the stalls ${marginAfter} ms`);
    check(s.marginMs < 20 && s.waitMs < 60, `at the end: ${JSON.stringify(s)}`);
  },

  // A link with 10 ms of jitter where 2% of the chunks wait 60 ms more (a
  // TCP segment lost and sent again): within a few seconds the margin has
  // grown to hold such a stall, and nothing more is stood in.
  jitter() {
    let x = 7;
    const random = () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x / 0x7fffffff;
    };
    const times = [];
    let lastAt = 0;
    for (let k = 0; k < 1200; k++) {
      lastAt = Math.max(lastAt, 0.02 + k * 0.01 + random() * 0.01 + (random() < 0.02 ? 0.06 : 0));
      times.push(lastAt);
    }
    let early = null;
    const { out, p } = play(12, (k) => times[k], tone(), {
      before(pl, now) {
        if (early === null && now >= 6) early = pl.stats().concealedMs;
      },
    });
    const s = p.stats();
    check(s.concealedMs === early, `stood in for after 6 s: ${s.concealedMs - early} ms`);
    const d = defects(out, 440, 6);
    check(d.gaps === 0 && d.splices === 0, `defects after 6 s ${JSON.stringify(d)}`);
  },

  // Far too much at once (a link that held a second): thrown away down to
  // the goal, crossfaded where the phase matches, with no splice.
  burst() {
    const arrival = (k) => Math.max(0.02 + k * 0.01, k >= 100 && k < 200 ? 2.0 : 0);
    const { out, p } = play(4, arrival, tone(), {
      before(pl, now) {
        if (now > 2.05 && now < 2.06) check(pl.held() < 0.26 * RATE, `held ${pl.held()}`);
      },
    });
    const d = defects(out, 440, 2.05);
    const s = p.stats();
    check(d.splices === 0, `defects ${JSON.stringify(d)}`);
    check(s.droppedMs > 500, `stats ${JSON.stringify(s)}`);
    check(s.bufferedMs < 120, `still waiting ${s.bufferedMs} ms`);
  },

  // What came before the output started is not a backlog it plays.
  backlog() {
    const { p } = play(0.1, () => 0, tone(), { chunks: 40 });
    const s = p.stats();
    check(s.bufferedMs < 40 && s.droppedMs > 300, `stats ${JSON.stringify(s)}`);
  },

  // A run of sound that ends is played to its last sample, then silence:
  // nothing stood in for after it.
  end() {
    const chunks = 100;
    const { out, p } = play(2, steady(0.02), tone(), { chunks, end: true });
    let first = -1;
    let last = -1;
    for (let i = 0; i < out.length; i++) {
      if (Math.abs(out[i]) > AMP / 10) {
        if (first < 0) first = i;
        last = i;
      }
    }
    const heard = (last - first) / RATE;
    check(heard > 0.99 && heard <= 1.0, `heard ${heard} s of 1 s`);
    const s = p.stats();
    check(s.concealments === 0 && s.underruns === 0, `stats ${JSON.stringify(s)}`);
    check(defects(out, 440, first / RATE + 0.01, last - 2).splices === 0, 'a splice');
  },
};

const name = process.argv[2];
if (!cases[name]) {
  console.error(`unknown case ${name}; cases: ${Object.keys(cases).join(', ')}`);
  process.exit(2);
}
try {
  cases[name]();
  console.log(`${name}: ok`);
} catch (e) {
  console.error(`${name}: ${e.message}`);
  process.exit(1);
}
