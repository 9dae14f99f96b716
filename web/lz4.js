// LZ4 block format (the frames' compression 1), decoded exactly into a
// buffer of the size the frame declares; anything that would read or
// write past either end is an error, never a wrong picture.
export function lz4Decode(src, size) {
  const dst = new Uint8Array(size);
  let s = 0;
  let d = 0;
  const length = (n) => {
    let b;
    do {
      if (s >= src.length) throw new Error('lz4: truncated length');
      b = src[s++];
      n += b;
    } while (b === 255);
    return n;
  };
  while (s < src.length) {
    const token = src[s++];
    let literals = token >> 4;
    if (literals === 15) literals = length(literals);
    if (s + literals > src.length || d + literals > size) throw new Error('lz4: literals past the end');
    dst.set(src.subarray(s, s + literals), d);
    s += literals;
    d += literals;
    if (s >= src.length) break; // the last sequence has literals alone
    if (s + 2 > src.length) throw new Error('lz4: truncated offset');
    const offset = src[s] | (src[s + 1] << 8);
    s += 2;
    let match = token & 15;
    if (match === 15) match = length(match);
    match += 4;
    if (offset === 0 || offset > d || d + match > size) throw new Error('lz4: match out of range');
    let m = d - offset;
    if (offset >= match) {
      dst.copyWithin(d, m, m + match);
      d += match;
    } else {
      for (let i = 0; i < match; i++) dst[d++] = dst[m++];
    }
  }
  if (d !== size) throw new Error('lz4: ' + d + ' bytes, not ' + size);
  return dst;
}
