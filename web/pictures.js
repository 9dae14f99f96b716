// Each window's pictures: a lossless frame drawn at once, video decoded
// (video.js) and drawn as it comes, newest first; each picture shown is
// acknowledged, with the input mark it answers. Handed the session.
import { FRAME } from './messages.js';
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
    w.lossless(m);
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
  if (!session.firstFrameMs) session.firstFrameMs = performance.now(); // from the page's start
  if (w.pendingMark) {
    const sent = session.input.markedAt(w.pendingMark);
    if (sent) {
      w.photon.push(performance.now() - sent);
      if (w.photon.length > 64) w.photon.shift();
    }
    w.pendingMark = 0;
  }
  session.send('frame_ack', { window: w.id, seq, recv_time_us: performance.now() * 1000 });
}
