// The apps' sound in the page: each audio message is one Opus packet,
// decoded by WebCodecs' AudioDecoder, and played by an AudioWorklet
// (playout.js) with rcomp-view's playout rules: a bounded delay that
// follows the link's jitter, a stand-in where the link stalls, no clicks.
import { AUDIO } from './messages.js';

export class Sound {
  static available() {
    return typeof AudioDecoder !== 'undefined' && typeof AudioWorkletNode !== 'undefined';
  }

  constructor() {
    this.counts = { packets: 0, lost: 0, underruns: 0, bufferedMs: 0, playedMs: 0, state: 'off' };
    this.expected = null;
    const resume = () => this.context?.resume();
    document.addEventListener('pointerdown', resume, true);
    document.addEventListener('keydown', resume, true);
  }

  async start() {
    if (!this.context) {
      this.context = new AudioContext({ sampleRate: AUDIO.rate, latencyHint: 'interactive' });
      await this.context.audioWorklet.addModule(new URL('playout.js', import.meta.url));
      this.node = new AudioWorkletNode(this.context, 'rcomp-playout', {
        numberOfInputs: 0, outputChannelCount: [AUDIO.channels],
      });
      this.node.port.onmessage = (e) => Object.assign(this.counts, e.data);
      this.node.connect(this.context.destination);
    }
    this.newDecoder();
  }

  newDecoder() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = new AudioDecoder({
      output: (data) => this.play(data),
      error: () => this.newDecoder(),
    });
    this.decoder.configure({ codec: 'opus', sampleRate: AUDIO.rate, numberOfChannels: AUDIO.channels });
    this.expected = null;
  }

  message(m) {
    if (!this.decoder || this.decoder.state !== 'configured') return;
    if (m.message === 'audio_end') {
      // The run's end goes to the playout after its last samples: the
      // decoder may still hold them, and a playout told of the end first
      // would take them for a new run and stand in after it.
      const d = this.decoder;
      d.flush().then(() => {
        if (this.decoder === d) this.node?.port.postMessage({ end: true });
      }).catch(() => {});
      this.expected = null;
      return;
    }
    this.counts.packets++;
    if (this.expected !== null && m.seq !== this.expected) {
      this.counts.lost += (m.seq - this.expected) >>> 0;
    }
    this.expected = (m.seq + 1) >>> 0;
    this.decoder.decode(new EncodedAudioChunk({
      type: 'key', timestamp: m.time_us, data: m.data,
    }));
  }

  play(data) {
    const n = data.numberOfFrames;
    const planes = [];
    for (let c = 0; c < AUDIO.channels; c++) {
      const plane = new Float32Array(n);
      data.copyTo(plane, { planeIndex: Math.min(c, data.numberOfChannels - 1), format: 'f32-planar' });
      planes.push(plane);
    }
    data.close();
    this.node?.port.postMessage({ planes }, planes.map((p) => p.buffer));
  }

  // The link is gone: what the decoder still holds is played (the end of
  // a sound the session sent before it ended), then nothing.
  stop() {
    const d = this.decoder;
    this.decoder = null;
    if (!d || d.state === 'closed') return;
    d.flush().catch(() => {}).finally(() => {
      if (d.state !== 'closed') d.close();
      this.node?.port.postMessage({ end: true });
    });
  }

  // What the playout counts, and the sound's delay in the page: what
  // waits in the playout plus the context's own path to the speakers.
  stats() {
    const c = this.context;
    const path = c ? ((c.baseLatency || 0) + (c.outputLatency || 0)) * 1000 : 0;
    return {
      ...this.counts, context: c ? c.state : 'none',
      latencyMs: Math.round((this.counts.waitMs || 0) + path),
    };
  }
}
