// The gate's page: a login, then the user's sessions and the apps they may
// start. A session opens in the browser viewer (index.html#gate=NAME),
// whose WebSocket the gate bridges to the session. The login is an
// HttpOnly cookie the page never sees; each request that changes anything
// carries the login's CSRF token, which the page keeps in memory only.
// Each error is said next to what caused it (the login form, the app, the
// session), and the host is named as its administrator titled it.
import { windowless } from './windowless.js';

const $ = (id) => document.getElementById(id);
let csrf = '';

async function call(path, form) {
  const init = { credentials: 'same-origin' };
  if (form) {
    init.method = 'POST';
    init.body = new URLSearchParams({ ...form, csrf });
  }
  const r = await fetch('/api/' + path, init);
  const body = r.headers.get('content-type') === 'application/json' ? await r.json() : {};
  if (!r.ok) {
    const e = new Error(body.error || `${r.status} ${r.statusText}`);
    e.status = r.status;
    throw e;
  }
  return body;
}

function ago(when) {
  const s = Math.max(0, Date.now() / 1000 - when);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} days ago`;
}

// how: '' takes the session over (its viewer, if any, is let go), 'share'
// views beside the others, 'view-only' watches without input.
function open(name, how, app) {
  location.href = '/index.html#gate=' + encodeURIComponent(name) + (how ? `&${how}=1` : '') +
    (app ? '&app=' + encodeURIComponent(app) : '');
}

function button(text, onclick, label) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  b.addEventListener('click', onclick);
  return b;
}

// An error said beside what caused it.
function errorIn(li) {
  let e = li.querySelector('.error');
  if (!e) {
    e = document.createElement('p');
    e.className = 'error';
    e.setAttribute('role', 'alert');
    li.append(e);
  }
  return (text) => {
    e.textContent = text || '';
  };
}

// What a session is called: its user's name for it, else its windows'
// titles, else what it runs.
function nameOf(s) {
  return s.label || (s.titles.length ? s.titles.join(' \u00b7 ') : s.entry || s.app);
}

function renameForm(li, s, say) {
  const form = document.createElement('form');
  form.className = 'rename';
  const input = document.createElement('input');
  input.value = s.label || nameOf(s);
  input.maxLength = 120;
  input.setAttribute('aria-label', `new name for ${nameOf(s)}`);
  form.append(input, button('save', () => form.requestSubmit()),
    button('cancel', () => showSessions()));
  form.querySelector('button').type = 'submit';
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await call('rename', { name: s.name, label: input.value.trim() });
      await showSessions();
    } catch (err) {
      say(err.message);
    }
  });
  li.querySelector('.what').replaceWith(form);
  input.focus();
  input.select();
}

async function showSessions() {
  const list = await call('sessions');
  const ul = $('sessions');
  ul.replaceChildren();
  $('none').hidden = list.length > 0;
  for (const s of list) {
    const li = document.createElement('li');
    li.dataset.session = s.name;
    const title = nameOf(s);
    if (s.thumb) {
      const img = document.createElement('img');
      img.className = 'thumb';
      img.alt = `${title}: its windows`;
      img.src = `/api/thumb?name=${encodeURIComponent(s.name)}&at=${s.used}`;
      li.append(img);
    }
    const what = document.createElement('span');
    what.className = 'what';
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = title;
    const more = document.createElement('span');
    more.className = 'quiet';
    const use = s.viewers ? `in use now (${s.viewers} viewing)` : `last used ${ago(s.used || s.started)}`;
    more.textContent = `${use} \u00b7 started ${ago(s.started)} \u00b7 ${s.name}`;
    what.append(name, more);
    // An app that has opened no window (a server, a daemon): said so.
    const old = Date.now() / 1000 - s.started > 5;
    if (!s.titles.length && old) {
      const flag = document.createElement('span');
      flag.className = 'flag';
      flag.textContent = 'no window open: it may run without one';
      what.append(flag);
      if (s.entry) windowless.note(s.entry, true);
    } else if (s.titles.length && s.entry) {
      windowless.note(s.entry, false);
    }
    li.append(what);
    const say = errorIn(li);
    const act = (verb, f) => async () => {
      say('');
      try {
        await f();
      } catch (e) {
        say(`cannot ${verb}: ${e.message}`);
      }
    };
    const app = s.entry || '';
    const acts = document.createElement('span');
    acts.className = 'acts';
    acts.append(
      button('open', () => open(s.name, '', app), `open ${title}`),
      button('share', () => open(s.name, 'share', app), `share ${title}`),
      button('watch', () => open(s.name, 'view-only', app), `watch ${title}`),
      button('rename', () => renameForm(li, s, say), `rename ${title}`),
      button('stop', act('stop it', async () => {
        await call('stop', { name: s.name });
        await showSessions();
      }), `stop ${title}`));
    li.insertBefore(acts, li.querySelector('.error'));
    ul.append(li);
  }
}

async function showApps() {
  const { apps, empty } = await call('apps');
  const ul = $('apps');
  ul.replaceChildren();
  $('apps-empty').hidden = !empty;
  $('apps-empty').textContent = empty || '';
  for (const a of apps) {
    const li = document.createElement('li');
    li.dataset.app = a.id;
    if (a.icon) {
      const img = document.createElement('img');
      img.alt = '';
      img.src = '/api/icon?app=' + encodeURIComponent(a.id);
      li.append(img);
    }
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = a.name;
    if (windowless.had(a.id)) {
      const flag = document.createElement('span');
      flag.className = 'flag';
      flag.textContent = 'opened no window last time: it may run without one';
      what.append(flag);
    }
    const say = errorIn(li);
    li.insertBefore(what, li.querySelector('.error'));
    li.insertBefore(button('start', async () => {
      say('');
      try {
        const s = await call('start', { app: a.id });
        open(s.name, '', a.id);
      } catch (e) {
        say(`cannot start ${a.name}: ${e.message}`);
      }
    }, `start ${a.name}`), li.querySelector('.error'));
    ul.append(li);
  }
}

async function home(me) {
  csrf = me.csrf;
  $('who').textContent = me.user;
  $('door').hidden = true;
  $('home').hidden = false;
  $('error').textContent = '';
  // Sent here by a viewer whose login had ended: back to that session.
  const back = new URLSearchParams(location.hash.slice(1));
  if (back.get('back')) {
    history.replaceState(null, '', '/');
    open(back.get('back'), back.get('how') || '', back.get('app') || '');
    return;
  }
  try {
    await Promise.all([showSessions(), showApps()]);
  } catch (e) {
    $('error').textContent = e.message;
  }
}

function showDoor(notice) {
  $('home').hidden = true;
  $('door').hidden = false;
  $('door-notice').hidden = !notice;
  $('door-notice').textContent = notice || '';
  $('user').focus();
}

async function title() {
  try {
    const about = await call('about');
    if (about.title) {
      for (const el of document.querySelectorAll('.host')) el.textContent = about.title;
      document.title = `rcomp: ${about.title}`;
    }
  } catch (e) {
    // an older gate: the page's own words
  }
}

async function start() {
  title();
  $('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('login-error').textContent = '';
    $('enter').disabled = true;
    try {
      const me = await call('login', { user: $('user').value, password: $('password').value });
      $('password').value = '';
      $('door-notice').hidden = true;
      await home(me);
    } catch (err) {
      $('login-error').textContent = err.message;
      $('password').focus();
    } finally {
      $('enter').disabled = false;
    }
  });
  $('logout').addEventListener('click', async () => {
    try {
      await call('logout', {});
    } catch (e) {
      // gone already
    }
    csrf = '';
    showDoor('You are logged out. Your sessions keep running: log in to get back to them.');
  });
  try {
    await home(await call('me'));
  } catch (e) {
    // The viewer's menu logged out and came here.
    const out = location.hash === '#logged-out';
    if (out) history.replaceState(null, '', '/');
    showDoor(out ? 'You are logged out. Your sessions keep running: log in to get back to them.'
      : '');
  }
}

start();
