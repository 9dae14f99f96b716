// The browser viewer: rcomp-run's session as rcomp-view shows it, each
// remote toplevel a window in the page. This starts the session
// (session.js), which holds the rooms: the desk and its windows (desk.js,
// window.js), the pictures (pictures.js, video.js), the cursor, input,
// the clipboard, the HUD and sound; dispatch.js hands each message to its
// room. The messages' layout comes from messages.js, which the build
// generates from protocol/messages.h. window.rcomp is what the tests and the
// benchmarks read.
import { CONSTRAINT } from './messages.js';
import { Session } from './session.js';
import { Tap } from './tap.js';

const session = new Session(document.getElementById('rcomp-desk'), document.getElementById('rcomp-list'));
if (session.p.tap) session.tap = new Tap();
window.rcomp = {
  stats: () => session.stats(),
  files: () => session.files.stats(),
  notes: () => session.notes.state(),
  desktop: () => session.desk.desktop(),
  prints: () => session.files.prints.map((p) => ({ ...p })),
  tap: session.tap || null,
  session: () => ({
    bytes: session.bytes, connected: Boolean(session.conn?.open),
    welcomed: session.welcomed, retries: session.retries, viewers: session.viewers || null,
    clipboard: session.clipboard.theirs, firstFrameMs: session.firstFrameMs || null,
    sound: session.sound ? session.sound.stats() : null,
    pointerLocked: Boolean(document.pointerLockElement), watching: Boolean(session.watching),
    pointerConstraint: session.input.constraint
      ? (session.input.constraint.type === CONSTRAINT.lock ? 'lock' : 'confine') : null,
    fullscreen: Boolean(document.fullscreenElement), keyboardLocked: session.input.keyboardLocked,
  }),
};
// Another session, token or layout in the address (typed, or a bookmark
// opened over this page) is another page: load it as one. The page's own
// changes (replaceState) fire no hashchange.
window.addEventListener('hashchange', () => location.reload());
session.start();
