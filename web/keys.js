// Keys by where they are, and characters as typed. The browser's
// KeyboardEvent.code names a physical key, which is one Linux (evdev) key
// code; the session's keymap, compiled by rcomp-run from the layout's name,
// makes it a symbol, as the local keymap does for rcomp-view. A key that
// typed a printable character with no shortcut modifier held goes as that
// character (key_char), which rcomp-run types on the session's keymap
// whatever the browser's layout, an on-screen keyboard or the event's
// modifiers said; shortcuts (Ctrl, Alt, Super held) and keys that type
// nothing (arrows, F-keys, Enter) keep their physical keys.

const CODES = {
  Escape: 1, Digit1: 2, Digit2: 3, Digit3: 4, Digit4: 5, Digit5: 6, Digit6: 7, Digit7: 8,
  Digit8: 9, Digit9: 10, Digit0: 11, Minus: 12, Equal: 13, Backspace: 14, Tab: 15,
  KeyQ: 16, KeyW: 17, KeyE: 18, KeyR: 19, KeyT: 20, KeyY: 21, KeyU: 22, KeyI: 23, KeyO: 24,
  KeyP: 25, BracketLeft: 26, BracketRight: 27, Enter: 28, ControlLeft: 29, KeyA: 30,
  KeyS: 31, KeyD: 32, KeyF: 33, KeyG: 34, KeyH: 35, KeyJ: 36, KeyK: 37, KeyL: 38,
  Semicolon: 39, Quote: 40, Backquote: 41, ShiftLeft: 42, Backslash: 43, KeyZ: 44, KeyX: 45,
  KeyC: 46, KeyV: 47, KeyB: 48, KeyN: 49, KeyM: 50, Comma: 51, Period: 52, Slash: 53,
  ShiftRight: 54, NumpadMultiply: 55, AltLeft: 56, Space: 57, CapsLock: 58, F1: 59, F2: 60,
  F3: 61, F4: 62, F5: 63, F6: 64, F7: 65, F8: 66, F9: 67, F10: 68, NumLock: 69,
  ScrollLock: 70, Numpad7: 71, Numpad8: 72, Numpad9: 73, NumpadSubtract: 74, Numpad4: 75,
  Numpad5: 76, Numpad6: 77, NumpadAdd: 78, Numpad1: 79, Numpad2: 80, Numpad3: 81,
  Numpad0: 82, NumpadDecimal: 83, Lang5: 85, IntlBackslash: 86, F11: 87, F12: 88, IntlRo: 89,
  Lang3: 90, Lang4: 91, Convert: 92, KanaMode: 93, NonConvert: 94, NumpadEnter: 96,
  ControlRight: 97, NumpadDivide: 98, PrintScreen: 99, AltRight: 100, Home: 102,
  ArrowUp: 103, PageUp: 104, ArrowLeft: 105, ArrowRight: 106, End: 107, ArrowDown: 108,
  PageDown: 109, Insert: 110, Delete: 111, AudioVolumeMute: 113, AudioVolumeDown: 114,
  AudioVolumeUp: 115, Power: 116, NumpadEqual: 117, Pause: 119, NumpadComma: 121,
  Lang1: 122, Lang2: 123, IntlYen: 124, MetaLeft: 125, MetaRight: 126, ContextMenu: 127,
  BrowserStop: 128, Again: 129, Props: 130, Undo: 131, Select: 132, Copy: 133, Open: 134,
  Paste: 135, Find: 136, Cut: 137, Help: 138, LaunchApp2: 140, Sleep: 142, WakeUp: 143,
  LaunchApp1: 144, LaunchMail: 155, BrowserFavorites: 156, BrowserBack: 158,
  BrowserForward: 159, Eject: 161, MediaTrackNext: 163, MediaPlayPause: 164,
  MediaTrackPrevious: 165, MediaStop: 166, MediaSelect: 171, BrowserHome: 172,
  BrowserRefresh: 173, NumpadParenLeft: 179, NumpadParenRight: 180, F13: 183, F14: 184,
  F15: 185, F16: 186, F17: 187, F18: 188, F19: 189, F20: 190, F21: 191, F22: 192, F23: 193,
  F24: 194, BrowserSearch: 217,
};

export function keyCode(code) {
  return CODES[code] || 0;
}

// Keys by the names people write them ("ctrl+alt+t", "super", "F11",
// "shift+Tab"): each a modifier, a key's own name, one letter or digit, or
// a KeyboardEvent.code. null where a name is none of them.
const NAMES = {
  ctrl: 29, control: 29, alt: 56, shift: 42, super: 125, meta: 125, win: 125, logo: 125,
  altgr: 100, esc: 1, escape: 1, tab: 15, enter: 28, return: 28, space: 57, backspace: 14,
  delete: 111, del: 111, insert: 110, ins: 110, home: 102, end: 107, pageup: 104,
  pagedown: 109, up: 103, down: 108, left: 105, right: 106, print: 99, menu: 127,
  capslock: 58, minus: 12, equal: 13, plus: 13, comma: 51, period: 52, slash: 53,
};
const LOWER_CODES = Object.fromEntries(Object.entries(CODES).map(([k, v]) => [k.toLowerCase(), v]));

export function chordCodes(text) {
  const parts = String(text).trim().toLowerCase().split(/\s*\+\s*/).filter(Boolean);
  if (!parts.length) return null;
  const codes = [];
  for (const p of parts) {
    const code = NAMES[p] || LOWER_CODES[p] ||
      (/^[a-z]$/.test(p) ? CODES['Key' + p.toUpperCase()] : 0) ||
      (/^[0-9]$/.test(p) ? CODES['Digit' + p] : 0) ||
      (/^f([1-9]|1[0-9]|2[0-4])$/.test(p) ? CODES['F' + p.slice(1)] : 0);
    if (!code) return null;
    codes.push(code);
  }
  return codes;
}

// The modifier a key is (as modifiers() counts them), or 0.
export function modifierOf(code) {
  return { 29: 4, 97: 4, 42: 1, 54: 1, 56: 8, 125: 64, 126: 64, 100: 128 }[code] || 0;
}

// The character a key event typed, as a code point, or 0 where it is a
// shortcut or typed none. AltGr (which some systems report as Ctrl+Alt)
// types characters.
export function typedChar(e) {
  const altGr = e.getModifierState ? e.getModifierState('AltGraph') : false;
  if (e.metaKey || (!altGr && (e.ctrlKey || e.altKey))) return 0;
  const chars = [...(e.key || '')];
  if (chars.length !== 1) return 0;
  const cp = chars[0].codePointAt(0);
  return cp >= 0x20 && cp !== 0x7f && !(cp >= 0x80 && cp < 0xa0) ? cp : 0;
}

// The standard real modifiers, the first eight of any xkb keymap:
// Shift, Lock, Control, Mod1 (Alt), Mod2 (NumLock), Mod3, Mod4 (Super),
// Mod5 (AltGr, ISO_Level3_Shift).
export function modifiers(e) {
  const on = (name) => (e.getModifierState ? e.getModifierState(name) : false);
  let depressed = 0;
  let locked = 0;
  if (on('Shift')) depressed |= 1;
  if (on('Control')) depressed |= 4;
  if (on('Alt')) depressed |= 8;
  if (on('Meta') || on('OS')) depressed |= 64;
  if (on('AltGraph')) depressed |= 128;
  if (on('CapsLock')) locked |= 2;
  if (on('NumLock')) locked |= 16;
  return { depressed, latched: 0, locked, group: 0 };
}

// The layout's name: the fragment's `layout` (and `variant`, `options`)
// when given, else a guess from what the browser's layout types on a few
// keys (navigator.keyboard.getLayoutMap, where there is one), else "us".
const GUESSES = [
  // [layout, key, what it types there]
  ['fr', 'KeyQ', 'a'],
  ['de', 'KeyY', 'z'], ['ru', 'KeyQ', 'й'], ['ua', 'KeyS', 'і'], ['gr', 'KeyQ', ';'],
  ['il', 'KeyQ', '/'], ['es', 'Semicolon', 'ñ'], ['se', 'Semicolon', 'ö'],
  ['it', 'Semicolon', 'ò'], ['pt', 'Semicolon', 'ç'], ['gb', 'Backslash', '#'],
];

export async function layoutNames(p) {
  if (p.layout) return `${p.layout}\n${p.variant || ''}\n${p.options || ''}`;
  let layout = 'us';
  try {
    if (navigator.keyboard && navigator.keyboard.getLayoutMap) {
      const map = await navigator.keyboard.getLayoutMap();
      const guess = GUESSES.find(([, key, ch]) => map.get(key) === ch);
      if (guess) layout = guess[0];
    }
  } catch (e) {
    // no layout map here: the default
  }
  return `${layout}\n\n${p.options || ''}`;
}
