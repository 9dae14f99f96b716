// The menu: every control of the page in one panel apart from the
// connection (noVNC's ui.js, Guacamole's sidebar), opened by the bar's
// button, a touch on it, or Ctrl+Alt+Shift pressed and let go alone. Its
// sections: the view (fullscreen, fit or 1:1, zoom), keys the browser or
// the desktop keeps (Ctrl+Alt+Del, Super, Ctrl+W, Escape held, F11, any
// chord), the clipboard (text both ways where the browser refuses the
// page its clipboard), the picture (sharp or auto, the stream's figures),
// the session's notifications, the phone's touch (direct or a touchpad), the session (back to the list,
// log out) and share links. What it sets is kept in the browser
// (localStorage), so it holds across a reconnect and a reload.
import { chordCodes } from './keys.js';
import { FILES } from './messages.js';
import { pickedFiles } from './files.js';

const KEPT = 'rcomp-menu';
const SPECIAL = [
  ['ctrl-alt-del', 'Ctrl+Alt+Del', 'ctrl+alt+delete'],
  ['super', 'Super', 'super'],
  ['ctrl-w', 'Ctrl+W', 'ctrl+w'],
  ['escape', 'Escape (hold to hold)', 'escape'],
  ['f11', 'F11', 'f11'],
  ['alt-tab', 'Alt+Tab', 'alt+tab'],
];

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'data') Object.assign(e.dataset, v);
    else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

export class Menu {
  constructor(session) {
    this.session = session;
    this.kept = this.load();
    this.panel = null;
    this.chord = { armed: false, spoiled: false };
  }

  // What was kept, over the defaults: on a phone's narrow screen the apps
  // are drawn half as large again (a maximized window gets a size that
  // much smaller, so its text is readable).
  load() {
    const defaults = { zoom: window.innerWidth < 600 ? 1.5 : 1, fit: false, quality: 'auto',
      touch: 'direct', files: 'yes' };
    try {
      return { ...defaults, ...JSON.parse(localStorage.getItem(KEPT) || '{}') };
    } catch (e) {
      return defaults;
    }
  }

  keep(changes) {
    Object.assign(this.kept, changes);
    try {
      localStorage.setItem(KEPT, JSON.stringify(this.kept));
    } catch (e) {
      // a browser that keeps nothing: for this page only
    }
  }

  get open() {
    return Boolean(this.panel);
  }

  listen() {
    const s = this.session;
    s.desk.setView(this.kept);
    document.getElementById('rcomp-menu-toggle')?.addEventListener('click', () => this.toggle());
    // Ctrl+Alt+Shift pressed and let go with no other key: before the
    // page's input room sees the keys (the app still gets them).
    const MODS = ['Control', 'Alt', 'Shift'];
    window.addEventListener('keydown', (e) => {
      const c = this.chord;
      if (!c.held) c.held = new Set();
      c.held.add(e.code || e.key);
      if (!MODS.includes(e.key)) c.spoiled = true;
      else if (e.ctrlKey && e.altKey && e.shiftKey && !c.spoiled) c.armed = true;
    }, true);
    window.addEventListener('keyup', (e) => {
      const c = this.chord;
      c.held?.delete(e.code || e.key);
      if (c.armed && !c.spoiled && MODS.includes(e.key)) {
        c.armed = false;
        c.spoiled = true; // once a chord
        this.toggle();
      }
      if (!c.held?.size || (!e.ctrlKey && !e.altKey && !e.shiftKey && !MODS.includes(e.key))) {
        this.chord = { armed: false, spoiled: false };
      }
    }, true);
    window.addEventListener('blur', () => {
      this.chord = { armed: false, spoiled: false };
    });
    window.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.open && e.target.closest?.('#rcomp-menu')) this.close();
    });
    document.addEventListener('fullscreenchange', () => this.refresh());
  }

  toggle() {
    if (this.open) this.close();
    else this.show();
  }

  close() {
    if (!this.panel) return;
    clearInterval(this.ticker);
    this.panel.remove();
    this.panel = null;
    this.session.hud.menuOpen(false);
  }

  show() {
    this.close();
    const s = this.session;
    const panel = el('aside', { id: 'rcomp-menu', className: 'rcomp-keep-keys' });
    panel.setAttribute('role', 'dialog');
    panel.setAttribute('aria-label', 'rcomp menu');
    panel.append(
      el('header', {}, el('h2', { textContent: 'rcomp' }),
        el('button', { type: 'button', textContent: '\u2715', title: 'close the menu',
          data: { menu: 'close' }, on: { click: () => this.close() } })),
      this.viewSection(), this.keysSection(), this.clipboardSection(), this.filesSection(), this.notesSection(),
      this.pictureSection(), this.touchSection(), this.sessionSection(), this.shareSection());
    document.body.append(panel);
    this.panel = panel;
    s.hud.menuOpen(true);
    this.refresh();
    this.ticker = setInterval(() => this.refresh(), 1000);
    panel.querySelector('button')?.focus();
  }

  // What the sections show that changes by itself: fullscreen, the zoom,
  // the clipboard's state, the figures.
  refresh() {
    const p = this.panel;
    if (!p) return;
    const s = this.session;
    const mark = (sel, on) => p.querySelector(sel)?.setAttribute('aria-pressed', String(on));
    mark('[data-menu="fullscreen"]', Boolean(document.fullscreenElement));
    mark('[data-menu="fit"]', s.desk.fit);
    mark('[data-menu="one-to-one"]', !s.desk.fit && s.desk.zoom === 1);
    p.querySelector('[data-menu="zoom-level"]').textContent = `${Math.round(s.desk.zoom * 100)}%`;
    mark('[data-menu="sharp"]', this.kept.quality === 'sharp');
    mark('[data-menu="auto"]', this.kept.quality !== 'sharp');
    mark('[data-menu="touch-direct"]', this.kept.touch !== 'touchpad');
    mark('[data-menu="touchpad"]', this.kept.touch === 'touchpad');
    mark('[data-menu="hud"]', s.hud.on);
    for (const how of ['yes', 'ask', 'no']) mark(`[data-menu="files-${how}"]`, this.kept.files === how);
    p.querySelector('[data-menu="clipboard-state"]').textContent = s.clipboard.state();
    const remote = p.querySelector('[data-menu="clipboard-remote"]');
    if (remote.value !== (s.clipboard.theirs || '')) remote.value = s.clipboard.theirs || '';
    p.querySelector('[data-menu="figures"]').textContent = this.figures();
    const notes = s.notes.state();
    mark('[data-menu="notes-desktop"]', !notes.off && notes.permission === 'granted');
    mark('[data-menu="notes-page"]', !notes.off && notes.permission !== 'granted');
    mark('[data-menu="notes-off"]', notes.off);
    p.querySelector('[data-menu="notes-state"]').textContent = notes.off
      ? 'The session\'s notifications are not shown.'
      : notes.permission === 'denied'
        ? 'This browser refused the page its notifications: they show in the page.'
        : notes.permission === 'granted' ? 'Shown by this computer\'s desktop, and in the page.'
          : 'Shown in the page.';
  }

  section(title, ...children) {
    return el('section', {}, el('h3', { textContent: title }), ...children);
  }

  button(id, label, run, title = '') {
    return el('button', { type: 'button', textContent: label, title, data: { menu: id },
      on: { click: run } });
  }

  viewSection() {
    const s = this.session;
    const view = (changes) => {
      this.keep(changes);
      s.desk.setView(this.kept);
      this.refresh();
    };
    return this.section('View',
      el('p', {}, this.button('fullscreen', 'fullscreen', () => {
        if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
        else s.input.fullscreen();
      }, 'the page fills the screen; the keyboard goes to the apps (Escape held leaves)')),
      el('p', {},
        this.button('fit', 'fit the page', () => view({ fit: true, zoom: 1 }),
          'windows bigger than the page are shown smaller'),
        this.button('one-to-one', '1:1', () => view({ fit: false, zoom: 1 }),
          'one pixel of the app on one of the screen')),
      el('p', {},
        this.button('zoom-out', '\u2212', () => view({ fit: false, zoom: s.desk.zoom / 1.25 }),
          'zoom out'),
        el('span', { className: 'rcomp-menu-value', data: { menu: 'zoom-level' } }),
        this.button('zoom-in', '+', () => view({ fit: false, zoom: s.desk.zoom * 1.25 }),
          'zoom in: the app is drawn larger, and a maximized window gets a smaller size')));
  }

  keysSection() {
    const input = this.session.input;
    const keys = el('p');
    for (const [id, label, chord] of SPECIAL) {
      const codes = chordCodes(chord);
      // Pressed while the button is: a click taps the keys, a hold holds them.
      keys.append(el('button', { type: 'button', textContent: label, data: { menu: 'key-' + id },
        on: {
          pointerdown: (e) => {
            e.preventDefault();
            input.pressKeys(codes);
          },
          pointerup: () => input.releaseKeys(codes),
          pointerleave: () => input.releaseKeys(codes),
          pointercancel: () => input.releaseKeys(codes),
          keydown: (e) => {
            if (e.key !== 'Enter' && e.key !== ' ') return;
            e.preventDefault();
            input.pressKeys(codes);
            input.releaseKeys(codes);
          },
        } }));
    }
    const field = el('input', { type: 'text', placeholder: 'ctrl+alt+t', autocomplete: 'off',
      data: { menu: 'chord' } });
    field.setAttribute('aria-label', 'keys to send together');
    const said = el('span', { className: 'rcomp-menu-said', data: { menu: 'chord-said' } });
    const send = () => {
      const codes = chordCodes(field.value);
      if (!codes) {
        said.textContent = `"${field.value}" names a key rcomp does not know`;
        return;
      }
      said.textContent = '';
      input.pressKeys(codes);
      input.releaseKeys(codes);
    };
    field.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') send();
    });
    return this.section('Keys', keys,
      el('p', {}, field, this.button('chord-send', 'send', send), said));
  }

  clipboardSection() {
    const c = this.session.clipboard;
    const remote = el('textarea', { readOnly: true, rows: 3, data: { menu: 'clipboard-remote' } });
    remote.setAttribute('aria-label', "the session's clipboard");
    const local = el('textarea', { rows: 3, data: { menu: 'clipboard-local' } });
    local.setAttribute('aria-label', 'text to put on the session\'s clipboard');
    return this.section('Clipboard',
      el('p', { className: 'rcomp-menu-said', data: { menu: 'clipboard-state' } }),
      el('label', {}, "the session's:", remote),
      el('label', {}, 'to the session:', local),
      el('p', {}, this.button('clipboard-send', 'send to the session', () => c.offer(local.value))));
  }

  // Uploads: into the session's download folder (a drop on a window gives
  // them to its app).
  filesSection() {
    const s = this.session;
    const take = (how) => {
      this.keep({ files: how });
      this.refresh();
    };
    const pick = (folder) => {
      const input = el('input', { type: 'file', multiple: true, hidden: true,
        data: { menu: folder ? 'upload-folder-input' : 'upload-input' } });
      if (folder) input.webkitdirectory = true;
      input.addEventListener('change', () => {
        s.files.give(pickedFiles(input.files), FILES.upload);
        input.remove();
      });
      document.body.append(input);
      input.click();
    };
    return this.section('Files',
      el('p', {},
        this.button('upload', 'upload files', () => pick(false),
          'into the session\'s download folder'),
        this.button('upload-folder', 'upload a folder', () => pick(true))),
      el('p', {}, 'What the session sends: ',
        this.button('files-yes', 'save', () => take('yes'), 'saved as the browser\'s downloads'),
        this.button('files-ask', 'ask', () => take('ask'), 'asked each time'),
        this.button('files-no', 'refuse', () => take('no'))),
      el('p', { className: 'rcomp-menu-said',
        textContent: 'Or drop files on a window: its app gets them once they are there. ' +
          'What the session sends (rcomp-run --send, a print) comes as a download.' }));
  }

  // The session's notifications: here only, or the browser's too (its
  // permission asked from this click), or none.
  notesSection() {
    const n = this.session.notes;
    const set = (how) => {
      if (how === 'desktop') {
        n.setOff(false);
        n.ask();
      } else {
        n.setOff(how === 'off');
      }
      this.refresh();
    };
    return this.section('Notifications',
      el('p', {},
        this.button('notes-desktop', 'on this desktop', () => set('desktop'),
          'the browser shows them as this computer\'s notifications (it asks once)'),
        this.button('notes-page', 'in the page', () => set('page'),
          'a list at the top right of the page'),
        this.button('notes-off', 'off', () => set('off'))),
      el('p', { className: 'rcomp-menu-said', data: { menu: 'notes-state' } }));
  }

  pictureSection() {
    const s = this.session;
    const quality = (q) => {
      if (q === this.kept.quality) return;
      this.keep({ quality: q });
      this.refresh();
      s.reconnect(); // the codecs this viewer takes are said at its hello
    };
    return this.section('Picture',
      el('p', {},
        this.button('auto', 'auto', () => quality('auto'),
          'video while a window moves, lossless when it stops'),
        this.button('sharp', 'sharp', () => quality('sharp'),
          'every picture lossless: text and lines exact, motion slower on a slow link'),
        this.button('hud', 'figures on the windows', () => {
          s.hud.toggle();
          this.refresh();
        })),
      el('pre', { className: 'rcomp-menu-figures', data: { menu: 'figures' } }));
  }

  // The stream's figures, a line a window, as the HUD shows them.
  figures() {
    const lines = [];
    for (const w of this.session.windows.values()) {
      if (w.popup) continue;
      const title = (w.el.dataset.title || '(untitled)').slice(0, 30);
      lines.push(`${title}: ${w.hud.textContent || w.codec || 'waiting for figures'}`);
    }
    return lines.join('\n') || 'no windows';
  }

  touchSection() {
    const touch = (mode) => {
      this.keep({ touch: mode });
      this.session.input.setTouchMode(mode);
      this.refresh();
    };
    return this.section('Touch',
      el('p', {},
        this.button('touch-direct', 'direct', () => touch('direct'),
          'a finger is a touch where it is'),
        this.button('touchpad', 'touchpad', () => touch('touchpad'),
          'the screen is a touchpad: drag moves the pointer, tap clicks, two fingers scroll')));
  }

  sessionSection() {
    const s = this.session;
    const out = el('p');
    if (s.p.gate) {
      out.append(el('a', { href: '/', textContent: 'your sessions', className: 'rcomp-menu-link',
        data: { menu: 'sessions' } }),
      this.button('logout', 'log out', () => s.logOut(),
        'ends this login; the sessions keep running'));
    } else {
      out.append(this.button('disconnect', 'disconnect', () => s.disconnect(),
        'the session runs on; connect again from here'));
    }
    return this.section('Session', out);
  }

  shareSection() {
    const links = this.session.shareLinks();
    const box = el('div');
    for (const { id, label, url, note } of links) {
      const field = el('input', { type: 'text', readOnly: true, value: url || '',
        data: { menu: 'link-' + id } });
      field.setAttribute('aria-label', label);
      const copy = this.button('copy-' + id, 'copy', async () => {
        field.select();
        try {
          await navigator.clipboard.writeText(field.value);
        } catch (e) {
          document.execCommand?.('copy');
        }
      });
      box.append(el('p', {}, el('span', { textContent: label + ' ' }),
        ...(url ? [field, copy] : []),
        ...(note ? [el('span', { className: 'rcomp-menu-said', textContent: ' ' + note })] : [])));
    }
    return this.section('Share', box);
  }
}
