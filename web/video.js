// A window's video (protocol/PROTOCOL.md, "Video frames"): each frame's
// payload is one H.264 access unit in Annex B, decoded by the browser's
// WebCodecs VideoDecoder in the order it came. A reset starts a new stream,
// and a new decoder configured from the stream's own sequence parameters
// (profile, constraints and level make its codec string; High 4:4:4 where
// the server encoded the window in full chroma).

// NAL units of an Annex B access unit: [type, offset of the unit's header].
function units(au) {
  const out = [];
  for (let i = 0; i + 3 < au.length; i++) {
    if (au[i] === 0 && au[i + 1] === 0 && au[i + 2] === 1) {
      out.push([au[i + 3] & 0x1f, i + 3]);
      i += 3;
    }
  }
  return out;
}

// avc1.PPCCLL from the first sequence parameter set.
export function codecString(au) {
  const sps = units(au).find(([type]) => type === 7);
  if (!sps) return null;
  const at = sps[1];
  if (at + 3 >= au.length) return null;
  const hex = (v) => v.toString(16).padStart(2, '0');
  return 'avc1.' + hex(au[at + 1]) + hex(au[at + 2]) + hex(au[at + 3]);
}

export function isKey(au) {
  return units(au).some(([type]) => type === 5);
}

export class VideoStream {
  // onFrame(frame, seq): a decoded picture, which it must close.
  constructor(onFrame, onError) {
    this.onFrame = onFrame;
    this.onError = onError;
    this.decoder = null;
    this.codec = '';
    this.seqs = [];
  }

  decode(payload, seq, reset) {
    if (reset || !this.decoder) {
      this.close();
      const codec = codecString(payload);
      if (!codec) throw new Error('a video stream that does not start with its parameters');
      if (!isKey(payload)) throw new Error('a video stream that does not start with a key frame');
      if (typeof VideoDecoder === 'undefined') {
        throw new Error('this browser has no WebCodecs VideoDecoder (it needs a secure context)');
      }
      this.codec = codec;
      this.decoder = new VideoDecoder({
        output: (frame) => {
          const s = this.seqs.shift();
          this.onFrame(frame, s);
        },
        error: (e) => this.onError(e),
      });
      // Annex B, no description: every key frame carries its parameters.
      this.decoder.configure({ codec, optimizeForLatency: true });
      this.timestamp = 0;
    }
    this.seqs.push(seq);
    this.decoder.decode(new EncodedVideoChunk({
      type: isKey(payload) ? 'key' : 'delta',
      timestamp: this.timestamp++ * 16667,
      data: payload,
    }));
  }

  close() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.seqs = [];
  }
}
