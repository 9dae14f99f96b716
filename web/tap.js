// A measuring aid, as rcomp-view's RCOMP_VIEW_TAP: with #tap=1 in the
// page's address, the luma of every picture the page paints (full-range
// BT.601, as tests/clients/mark.h computes it) is kept, at the canvas's
// own size, with the wall-clock time it was painted. tools/bench_quality.py
// reads them after a run (window.rcomp.tap) and measures them with
// tests/clients/quality-probe. At most MAX pictures are kept.

const MAX = 4000;

export class Tap {
  constructor() {
    this.pictures = [];
  }

  // The canvas of a window, just painted.
  painted(w) {
    if (this.pictures.length >= MAX) return;
    const { width, height } = w.canvas;
    const rgba = w.ctx.getImageData(0, 0, width, height).data;
    const luma = new Uint8Array(width * height);
    for (let i = 0, j = 0; i < luma.length; i++, j += 4) {
      luma[i] = (77 * rgba[j] + 150 * rgba[j + 1] + 29 * rgba[j + 2] + 128) >> 8;
    }
    this.pictures.push({ window: w.id, width, height, ms: performance.timeOrigin + performance.now(), luma });
  }

  count() {
    return this.pictures.length;
  }

  // Picture i, its luma in base64 (for the driver's JSON).
  take(i) {
    const p = this.pictures[i];
    let s = '';
    for (let k = 0; k < p.luma.length; k += 0x8000) {
      s += String.fromCharCode.apply(null, p.luma.subarray(k, k + 0x8000));
    }
    this.pictures[i] = null; // handed over
    return { window: p.window, width: p.width, height: p.height, ms: p.ms, luma: btoa(s) };
  }
}
