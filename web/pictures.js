// Each window's pictures: a lossless frame (lz4 or raw, XOR or replace)
// and copy_rect applied to the window's copy and drawn at once, video
// decoded (video.js) and drawn as it comes, newest first; each picture
// shown is acknowledged, with the input mark it answers, and said shown at
// the browser's next animation frame (the app's presentation feedback).
// Handed the session.
import { lz4Decode } from './lz4.js';
import { FRAME, PRESENTED, RECT_SIZE } from './messages.js';
import { VideoStream } from './video.js';

export function frame(session, m) {
  const w = session.windows.get(m.window);
  if (!w) return;
  if (m.codec === FRAME.codecXor) {
    if (w.stream) {
      w.stream.close();
      w.stream = null;
    }
    w.dropVideoFrame();
    lossless(w, m);
    presented(session, w, m.seq);
    return;
  }
  if (m.codec !== FRAME.codecH264) throw new Error('a frame of an unknown codec');
  if (!w.stream) {
    if (!(m.flags & FRAME.reset)) throw new Error('video that does not start with reset');
    w.stream = new VideoStream((picture, seq) => {
      if (session.windows.get(w.id) !== w || !w.stream) {
        picture.close();
        return;
      }
      // Drawn as it comes, as rcomp-view commits it: the browser shows
      // the newest at its next frame. Newest wins where pictures wait:
      // those decoded in one burst (a starved page) are drawn once, and
      // a hidden page draws and acks nothing until it is shown again,
      // as a hidden Wayland window gets no frame callbacks.
      w.dropVideoFrame();
      w.nextFrame = { frame: picture, seq, size: w.videoSize, codec: w.stream.codec };
      if (!w.paintQueued && !document.hidden) {
        w.paintQueued = true;
        setTimeout(() => paintVideo(session, w), 0);
      }
    }, (e) => {
      session.error('video: ' + e.message);
      session.conn.close();
    });
  }
  w.videoSize = [m.width, m.height];
  w.stream.decode(m.payload, m.seq, (m.flags & FRAME.reset) !== 0);
}

export function paintVideo(session, w) {
  const next = w.nextFrame;
  w.paintQueued = false;
  if (!next || document.hidden) return;
  w.nextFrame = null;
  if (session.windows.get(w.id) === w && w.stream) {
    w.video(next.frame, next.size[0], next.size[1]);
    w.codec = 'H.264 ' + next.codec;
    presented(session, w, next.seq);
  }
  next.frame.close();
}

function presented(session, w, seq) {
  w.presented++;
  if (session.tap) session.tap.painted(w);
  if (!session.firstFrameMs) {
    session.firstFrameMs = performance.now(); // from the page's start
    session.shown();
  }
  if (w.pendingMark) {
    const sent = session.input.markedAt(w.pendingMark);
    if (sent) {
      w.photon.push(performance.now() - sent);
      if (w.photon.length > 64) w.photon.shift();
    }
    w.pendingMark = 0;
  }
  session.send('frame_ack', { window: w.id, seq, recv_time_us: performance.now() * 1000 });
  // While the app asks (window_feedback), once an animation frame, the
  // newest picture drawn: a tab not shown runs none, and its pictures are
  // never seen.
  if (w.feedbackWanted && !w.presentPending) {
    w.presentPending = true;
    requestAnimationFrame((t) => {
      w.presentPending = false;
      if (session.windows.get(w.id) !== w) return;
      session.send('frame_presented', {
        window: w.id, seq: w.presentSeq, time_us: t * 1000, refresh_ns: 0,
        flags: PRESENTED.estimate,
      });
    });
  }
  w.presentSeq = seq;
}

export function lossless(w, m) {
  if ((m.flags & FRAME.reset) || m.width !== w.width || m.height !== w.height) {
    if (!(m.flags & FRAME.reset)) throw new Error('a frame of a new size without reset');
    if (m.width !== w.width || m.height !== w.height) w.resizeTo(m.width, m.height);
    w.pixels = null;
  }
  if (!w.pixels) {
    // A reset: the copy starts black and transparent, as the server's does.
    w.backing(m.width, m.height);
    w.pixels = new Uint8Array(m.width * m.height * 4);
    w.image = w.ctx.createImageData(m.width, m.height);
    w.ctx.putImageData(w.image, 0, 0);
  }
  // The rectangles lie inside the frame, apart, and make its raw size:
  // wire.js checked that (CHECKS.frame) as it read the frame.
  const rects = [];
  for (let i = 0; i < m.nrects; i++) {
    const v = new DataView(m.rects.buffer, m.rects.byteOffset + i * RECT_SIZE, RECT_SIZE);
    rects.push({ x: v.getInt32(0, true), y: v.getInt32(4, true), w: v.getInt32(8, true), h: v.getInt32(12, true) });
  }
  let raw;
  if (m.compression === FRAME.none) raw = m.payload;
  else if (m.compression === FRAME.lz4) raw = lz4Decode(m.payload, m.raw_size);
  else throw new Error('a frame in a compression this page did not ask for');
  if (raw.length !== m.raw_size) throw new Error('a frame payload of the wrong size');
  const replace = (m.flags & FRAME.replace) !== 0;
  const px = w.pixels;
  const img = w.image.data;
  let o = 0;
  for (const r of rects) {
    for (let y = r.y; y < r.y + r.h; y++) {
      let p = (y * m.width + r.x) * 4;
      for (let x = 0; x < r.w; x++, p += 4, o += 4) {
        if (replace) {
          px[p] = raw[o]; px[p + 1] = raw[o + 1]; px[p + 2] = raw[o + 2]; px[p + 3] = raw[o + 3];
        } else {
          px[p] ^= raw[o]; px[p + 1] ^= raw[o + 1]; px[p + 2] ^= raw[o + 2]; px[p + 3] ^= raw[o + 3];
        }
        unpremultiply(px, img, p);
      }
    }
    w.ctx.putImageData(w.image, 0, 0, r.x, r.y, r.w, r.h);
  }
  w.codec = 'lossless';
}

// copy_rect: part of the copy moves; the frame that follows completes it.
export function copyRect(w, m) {
  if (!w.pixels || m.x + m.width > w.width || m.y + m.height > w.height ||
      m.x + m.dx < 0 || m.y + m.dy < 0 || m.x + m.dx + m.width > w.width ||
      m.y + m.dy + m.height > w.height || (m.dx === 0 && m.dy === 0)) {
    throw new Error('a copy_rect outside the window');
  }
  const stride = w.width * 4;
  const rows = [];
  for (let y = 0; y < m.height; y++) {
    const at = (m.y + y) * stride + m.x * 4;
    rows.push(w.pixels.slice(at, at + m.width * 4));
  }
  const img = w.image.data;
  for (let y = 0; y < m.height; y++) {
    const at = (m.y + m.dy + y) * stride + (m.x + m.dx) * 4;
    w.pixels.set(rows[y], at);
    for (let p = at; p < at + m.width * 4; p += 4) unpremultiply(w.pixels, img, p);
  }
  w.ctx.putImageData(w.image, 0, 0, m.x + m.dx, m.y + m.dy, m.width, m.height);
  w.copies++;
}


// The wire's premultiplied little-endian ARGB to the canvas's RGBA.
function unpremultiply(px, img, p) {
  const a = px[p + 3];
  if (a === 255 || a === 0) {
    img[p] = px[p + 2]; img[p + 1] = px[p + 1]; img[p + 2] = px[p];
  } else {
    img[p] = Math.min(255, Math.round(px[p + 2] * 255 / a));
    img[p + 1] = Math.min(255, Math.round(px[p + 1] * 255 / a));
    img[p + 2] = Math.min(255, Math.round(px[p] * 255 / a));
  }
  img[p + 3] = a;
}
