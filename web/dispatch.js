// Each message from rcomp-run to the room it is for, as rcomp-view's
// dispatch.c does: the session's own (welcome, goodbye, viewers), the
// desk's (windows), the pictures', the cursor, input, the clipboard, the
// HUD and sound. Handed the session.
import { BYE, VIEWERS } from './messages.js';
import { setCursor } from './cursor.js';
import { copyRect, frame } from './pictures.js';

export function dispatch(session, m) {
  const desk = session.desk;
  const w = m.window !== undefined ? desk.windows.get(m.window) : undefined;
  switch (m.message) {
    case 'welcome':
      session.welcomed = true;
      session.everWelcomed = true;
      session.minor = m.minor; // what it takes: key_char from 8
      session.retries = 0;
      session.status('session ' + m.name);
      session.veil.hide();
      session.welcome();
      break;
    case 'goodbye':
      if (m.reason === BYE.busy) {
        // Busy is for now (a door under a flood, a full session): the
        // link's close tries again, later each time.
        session.busy = m.text || 'the session is busy';
        break;
      }
      session.goodbye(m.reason, m.status, m.text);
      break;
    case 'sync':
      desk.dropStale();
      break;
    case 'window_new':
      desk.windowNew(m, null);
      break;
    case 'popup_new':
      desk.windowNew(m, m);
      break;
    case 'window_title':
      if (w) w.setTitle(m.text);
      break;
    case 'window_app_id':
      if (w) w.el.dataset.appId = m.text;
      break;
    case 'window_destroy':
      desk.destroy(m.window);
      break;
    case 'window_scale':
      if (w) w.setScale(m.scale);
      break;
    case 'window_hints':
      if (w) w.hints = [m.min_width, m.min_height, m.max_width, m.max_height];
      break;
    case 'window_request':
      if (w) desk.request(w, m.request);
      break;
    case 'window_grab':
      if (w) session.input.grab(w, m);
      break;
    case 'frame':
      frame(session, m);
      break;
    case 'copy_rect':
      if (w) copyRect(w, m);
      break;
    case 'frame_mark':
      if (w) w.pendingMark = m.mark;
      break;
    case 'cursor':
      setCursor(desk.el, m);
      break;
    case 'window_stats':
      if (w) session.hud.windowStats(w, m);
      break;
    case 'video_stats':
      if (w) session.hud.videoStats(w, m);
      break;
    case 'watch_token':
      session.watchToken = m.token; // for the menu's link to watch
      session.menu?.refresh();
      break;
    case 'session_viewers':
      session.viewers = m;
      // Admitted with the watch token: it sends no input at all.
      session.watching = (m.flags & VIEWERS.watching) !== 0;
      for (const [name, values] of session.held.splice(0)) session.sendInput(name, values);
      session.status(`session: ${m.count} viewer${m.count > 1 ? 's' : ''}` +
        ((m.flags & VIEWERS.watching) ? ', watching only' : '') +
        ((m.flags & VIEWERS.input) ? '' : ', input elsewhere'));
      break;
    case 'pointer_constraint':
      if (w) session.input.setConstraint(w, m);
      break;
    case 'text_input':
      session.input.textInputState(m);
      break;
    case 'selection':
      session.clipboard.selection(m);
      break;
    case 'transfer_request':
      session.clipboard.request(m);
      break;
    case 'transfer_data':
      session.clipboard.data(m);
      break;
    case 'transfer_ack':
      session.clipboard.ack(m);
      break;
    case 'file_group':
    case 'file_offer':
    case 'file_data':
    case 'file_ack':
    case 'file_done':
      session.files.message(m);
      break;
    case 'window_idle_inhibit':
      if (w) desk.idleInhibit(w, Boolean(m.inhibit));
      break;
    case 'window_activate':
      if (w) desk.activate(w);
      break;
    case 'window_feedback':
      if (w) w.feedbackWanted = Boolean(m.on);
      break;
    case 'notify':
    case 'notify_close':
      session.notes.message(m);
      break;
    case 'audio':
    case 'audio_end':
      if (session.sound) session.sound.message(m);
      break;
    default:
      break; // nothing the page shows (window_parent, window_decoration, host_name...)
  }
}
