// The gate's page: a login, then the user's sessions and the apps they may
// start. A session opens in the browser viewer (index.html#gate=NAME),
// whose WebSocket the gate bridges to the session. The login is an
// HttpOnly cookie the page never sees; each request that changes anything
// carries the login's CSRF token, which the page keeps in memory only.
const $ = (id) => document.getElementById(id);
let csrf = '';

function error(text) {
  $('error').textContent = text || '';
}

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

function age(started) {
  const s = Math.max(0, Date.now() / 1000 - started);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} days`;
}

// how: '' takes the session over (its viewer, if any, is let go), 'share'
// views beside the others, 'view-only' watches without input.
function open(name, how, app) {
  location.href = '/index.html#gate=' + encodeURIComponent(name) + (how ? `&${how}=1` : '') +
    (app ? '&app=' + encodeURIComponent(app) : '');
}

function button(text, onclick) {
  const b = document.createElement('button');
  b.textContent = text;
  b.addEventListener('click', onclick);
  return b;
}

async function showSessions() {
  const list = await call('sessions');
  const ul = $('sessions');
  ul.replaceChildren();
  $('none').hidden = list.length > 0;
  for (const s of list) {
    const li = document.createElement('li');
    li.dataset.session = s.name;
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = (s.titles.length ? s.titles.join(' · ') : s.app) + ' ';
    const more = document.createElement('span');
    more.className = 'quiet';
    more.textContent = `${s.name} · ${age(s.started)} · ` +
      (s.viewers ? `${s.viewers} viewing` : 'nobody viewing');
    what.append(more);
    li.append(what,
      button('open', () => open(s.name, '', s.app)),
      button('share', () => open(s.name, 'share', s.app)),
      button('watch', () => open(s.name, 'view-only', s.app)),
      button('stop', async () => {
        try {
          await call('stop', { name: s.name });
          await showSessions();
        } catch (e) {
          error(e.message);
        }
      }));
    ul.append(li);
  }
}

async function showApps() {
  const apps = await call('apps');
  const ul = $('apps');
  ul.replaceChildren();
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
    li.append(what, button('start', async () => {
      try {
        const s = await call('start', { app: a.id });
        open(s.name, '', a.id);
      } catch (e) {
        error(e.message);
      }
    }));
    ul.append(li);
  }
}

async function home(me) {
  csrf = me.csrf;
  $('who').textContent = me.user;
  $('door').hidden = true;
  $('home').hidden = false;
  error('');
  // Sent here by a viewer whose login had ended: back to that session.
  const back = new URLSearchParams(location.hash.slice(1));
  if (back.get('back')) {
    history.replaceState(null, '', '/');
    open(back.get('back'), back.get('how') || '');
    return;
  }
  await Promise.all([showSessions(), showApps()]);
}

async function start() {
  $('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    error('');
    $('enter').disabled = true;
    try {
      const me = await call('login', { user: $('user').value, password: $('password').value });
      $('password').value = '';
      await home(me);
    } catch (err) {
      error(err.message);
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
    $('home').hidden = true;
    $('door').hidden = false;
    error('You are logged out. Your sessions keep running: log in to get back to them.');
  });
  try {
    await home(await call('me'));
  } catch (e) {
    $('door').hidden = false;
    $('user').focus();
    // The viewer's menu logged out and came here.
    if (location.hash === '#logged-out') {
      history.replaceState(null, '', '/');
      error('You are logged out. Your sessions keep running: log in to get back to them.');
    }
  }
}

start();
