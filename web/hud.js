// The HUD: each window's figures over its picture, as rcomp-view's --hud
// shows them (the codec, the app's and the sent frame rates, the bytes,
// the round trip, input to photon), toggled by the bar's button or
// Ctrl+Alt+Shift+H. The server sends window_stats while a viewer wants them,
// and video_stats (the encoder's preset, quantizer, bit rate and picture)
// for each window in video.

import { PRESETS } from './messages.js';

export function median(a) {
  if (!a.length) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

export class Hud {
  // session: windows, send(name, values).
  constructor(session, on) {
    this.session = session;
    this.on = on;
  }

  listen() {
    document.addEventListener('keydown', (e) => {
      if (e.ctrlKey && e.altKey && e.shiftKey && e.code === 'KeyH') this.toggle();
    });
    document.getElementById('rcomp-hud-toggle')?.addEventListener('click', () => this.toggle());
  }

  // Figures are wanted while the HUD shows or the menu lists them.
  wanted() {
    this.session.send('stats_wanted', { on: this.on || this.menu ? 1 : 0 });
  }

  // A new connection: the server forgot what this viewer wanted.
  welcomed() {
    if (this.on || this.menu) this.wanted();
  }

  toggle() {
    this.on = !this.on;
    this.wanted();
    for (const w of this.session.windows.values()) w.showHud(this.on);
  }

  menuOpen(on) {
    this.menu = on;
    this.wanted();
  }

  windowStats(w, m) {
    w.stats = m;
    const photon = median(w.photon);
    const v = m.video ? w.videoStats : null;
    w.hud.textContent = `${w.codec || '-'}${m.threads ? ' ' + m.threads + ' thr' : ''}  ` +
      (v ? `${PRESETS[v.preset] || '?'} QP ${v.qp} ${(v.bitrate / 1e6).toFixed(1)} Mbit/s ` +
        `${v.width}x${v.height}  ` : '') +
      `app ${m.app_fps} sent ${m.sent_fps} fps  ${(m.bytes / 1024).toFixed(0)} KiB/s  ` +
      `rtt ${(m.rtt_us / 1000).toFixed(1)} ms` +
      (photon !== null ? `  input→photon ${photon.toFixed(1)} ms` : '');
    const files = this.session.files?.hudText();
    if (files) w.hud.textContent += `  ${files}`;
  }

  // A transfer moved: its line in the HUD now, not at the next second's.
  filesChanged() {
    if (!this.on) return;
    for (const w of this.session.windows.values()) if (w.stats) this.windowStats(w, w.stats);
  }

  // Sent just after window_stats, whose text it joins the next second.
  videoStats(w, m) {
    w.videoStats = m;
    if (w.stats) this.windowStats(w, w.stats);
  }
}
