// What a phone or a tablet lacks to type into an app: a keyboard button
// that brings up the on-screen keyboard (the page's input method field,
// focused by the tap: what it types goes as characters, its compositions
// to an app's text input), and a bar of the keys it has not (Ctrl, Alt,
// Super, Esc, Tab, the arrows). A modifier tapped once holds for the next
// key and lets go after it; tapped twice, it stays down until tapped again.
import { chordCodes } from './keys.js';

const KEYS = [
  ['ctrl', 'Ctrl', true], ['alt', 'Alt', true], ['super', 'Super', true],
  ['esc', 'Esc', false], ['tab', 'Tab', false],
  ['left', '\u2190', false], ['up', '\u2191', false], ['down', '\u2193', false],
  ['right', '\u2192', false],
];
const TWICE_MS = 400;

export class Keybar {
  constructor(session) {
    this.session = session;
    this.el = null;
    this.latched = new Map(); // modifier name: 'once' | 'locked'
    this.tapped = new Map(); // modifier name: when it was last tapped
  }

  get input() {
    return this.session.input;
  }

  listen() {
    document.getElementById('rcomp-keyboard')?.addEventListener('click', () => this.keyboard());
    // A touch screen shows the bar from the start.
    if (window.matchMedia?.('(pointer: coarse)').matches) this.show(true);
  }

  // The on-screen keyboard comes up for a focused text field, where the
  // tap that focused it was the person's.
  keyboard() {
    this.show(true);
    const ime = this.input.ime;
    if (!ime) return;
    ime.classList.add('rcomp-typing');
    ime.focus({ preventScroll: true });
  }

  show(on) {
    if (on && !this.el) {
      const bar = document.createElement('div');
      bar.id = 'rcomp-keybar';
      bar.className = 'rcomp-keep-keys';
      for (const [name, label, modifier] of KEYS) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = label;
        b.dataset.key = name;
        // A tap on the bar must not take the focus from the keyboard's field.
        b.addEventListener('pointerdown', (e) => e.preventDefault());
        b.addEventListener('click', () => (modifier ? this.modifier(name) : this.tap(name)));
        bar.append(b);
      }
      document.body.append(bar);
      document.body.classList.add('rcomp-with-keybar');
      this.el = bar;
      this.session.desk.setView({});
    } else if (!on && this.el) {
      this.el.remove();
      this.el = null;
      document.body.classList.remove('rcomp-with-keybar');
    }
  }

  modifier(name) {
    const now = performance.now();
    const codes = chordCodes(name);
    const state = this.latched.get(name);
    if (state === 'locked' || (state === 'once' && now - (this.tapped.get(name) || 0) >= TWICE_MS)) {
      this.latched.delete(name);
      this.input.releaseKeys(codes);
    } else if (state === 'once') {
      this.latched.set(name, 'locked');
    } else {
      this.latched.set(name, 'once');
      this.input.pressKeys(codes);
    }
    this.tapped.set(name, now);
    this.refresh();
  }

  tap(name) {
    const codes = chordCodes(name);
    this.input.pressKeys(codes);
    this.input.releaseKeys(codes);
    this.typed();
  }

  // A key went with the modifiers held once: they let go now.
  typed() {
    for (const [name, state] of [...this.latched]) {
      if (state !== 'once') continue;
      this.latched.delete(name);
      this.input.releaseKeys(chordCodes(name));
    }
    this.refresh();
  }

  // What the bar shows: each modifier held once or locked. The server let
  // every key go when the focus moved: so does the bar.
  refresh() {
    if (!this.el) return;
    for (const [name] of [...this.latched]) {
      if (!chordCodes(name).every((c) => this.input.keysHeld.has(c))) this.latched.delete(name);
    }
    for (const b of this.el.querySelectorAll('button')) {
      const state = this.latched.get(b.dataset.key);
      b.classList.toggle('rcomp-latched', state === 'once');
      b.classList.toggle('rcomp-locked', state === 'locked');
      b.setAttribute('aria-pressed', String(Boolean(state)));
    }
  }
}
