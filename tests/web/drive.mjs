// A browser the tests drive: Debian's chromium (headless) through
// puppeteer-core, one page, commanded by one line of JSON per command on
// stdin and answering one line of JSON each on stdout (rig.py's Browser):
//   {"op": "open", "url": U, "timeout": S, "clipboard": false}
//                                            load the page (30 s), the
//                                            clipboard allowed unless said;
//                                            {loadMs}
//   {"op": "wait", "js": EXPR, "timeout": S}  until EXPR (in the page) is
//                                            truthy; {value}
//   {"op": "eval", "js": EXPR}                {value}
//   {"op": "canvas", "title": T}             the window's pixels, RGBA
//                                            in base64; {width, height, rgba}
//   {"op": "mouse", "do": "move"|"down"|"up"|"wheel", "x", "y", "button",
//    "deltaX", "deltaY", "steps"}            page coordinates
//   {"op": "key", "do": "down"|"up"|"press", "key": K}  puppeteer's names
//   {"op": "type", "text": T}                 text as an input method
//                                            commits it
//   {"op": "keyevents", "events": [{type: "keyDown"|"keyUp", key, code,
//    modifiers, text}]}                      key events as a browser with
//                                            another layout makes them
//                                            (CDP's, modifiers 1 Alt, 2 Ctrl,
//                                            4 Meta, 8 Shift)
//   {"op": "compose", "text": T}              an input method's composition
//                                            (preedit) so far
//   {"op": "touch", "do": "tap", "x", "y"}
//   {"op": "pinch", "x", "y", "scale"}        a trackpad's pinch there (CDP's
//                                            synthesized pinch, from a mouse)
//   {"op": "pen", "events": [{type: "mouseMoved"|"mousePressed"|
//    "mouseReleased", x, y, button, buttons, force, tiltX, tiltY, twist}]}
//                                            a pen, as CDP's mouse events of
//                                            pointerType pen
//   {"op": "touches", "events": [{type: "touchStart"|"touchMove"|"touchEnd",
//    points: [[x, y], ...]}]}                 fingers, as CDP's touch events
//   {"op": "choose_files", "click": SELECTOR, "paths": [P]}  a click that
//                                            opens a file chooser, answered
//   {"op": "drop_files", "x", "y", "paths": [P]}  files dragged from the
//                                            desktop and dropped there
//   {"op": "downloads", "path": DIR}          the browser's downloads go there
//   {"op": "viewport", "width", "height", "mobile", "touch", "scale"}
//                                            the page as a phone shows it
//   {"op": "clipboard", "text": T}            the browser's clipboard set
//   {"op": "permission", "name": N, "setting": "denied"|"prompt"}
//                                            the browser's permission N
//                                            (notifications) for the page's
//                                            origin: refused, or to be asked
//                                            (headless chromium grants none
//                                            of notifications: asked, it
//                                            says no)
//   {"op": "grant", "origin": O, "permissions": [P]}
//                                            CDP's permission types P
//                                            (wakeLockScreen) given to O
//                                            before a page of it opens
//   {"op": "screenshot", "path": P}           the page as shown, a PNG at P
//   {"op": "tabs"}                            the browser's pages: {tabs: [{url}]}
//   {"op": "axe"}                             axe-core's audit of the page as
//                                            it is: {passes, violations:
//                                            [{id, impact, help, nodes}]}
//   {"op": "quit"}
// A command that fails answers {failure: message}; the browser stays.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import readline from 'node:readline';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);

const args = ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required',
  '--window-size=1280,800'];
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: 'new',
  args,
  ignoreDefaultArgs: ['--mute-audio'],
  defaultViewport: { width: 1280, height: 800 },
});
const page = await browser.newPage();
// The page's console, in the rig's log of the browser.
page.on('console', (m) => process.stderr.write('console: ' + m.text() + '\n'));
page.on('pageerror', (e) => process.stderr.write('pageerror: ' + e.message + '\n'));

async function run(c) {
  switch (c.op) {
    case 'open': {
      const origin = new URL(c.url).origin;
      // clipboard: false, as a browser that refuses the page its clipboard.
      await browser.defaultBrowserContext().overridePermissions(origin, c.clipboard === false ? []
        : ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
      // A URL that differs from the page's only in its fragment would be a
      // navigation within the same document: the page would not load again.
      const here = new URL(page.url()), there = new URL(c.url);
      here.hash = there.hash = '';
      if (here.href === there.href) await page.goto('about:blank');
      const started = Date.now();
      await page.goto(c.url, { timeout: (c.timeout || 30) * 1000 });
      return { loadMs: Date.now() - started };
    }
    case 'wait': {
      const h = await page.waitForFunction(c.js, { timeout: (c.timeout || 30) * 1000, polling: 50 });
      return { value: await h.jsonValue() };
    }
    case 'eval':
      return { value: (await page.evaluate(c.js)) ?? null };
    case 'canvas':
      return page.evaluate((title) => {
        const el = [...document.querySelectorAll('.rcomp-window')].find((e) => e.dataset.title === title);
        if (!el) throw new Error('no window titled ' + title);
        const cv = el.querySelector('canvas');
        const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        let s = '';
        for (let i = 0; i < d.length; i += 32768) s += String.fromCharCode(...d.subarray(i, i + 32768));
        return { width: cv.width, height: cv.height, rgba: btoa(s) };
      }, c.title);
    case 'axe': {
      // Evaluated through the devtools, past the page's CSP, as axe's own
      // integrations inject it.
      const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
      await page.evaluate(source);
      return page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ['violations'] });
        return {
          passes: r.passes.length,
          violations: r.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => n.target.join(' ')),
          })),
        };
      });
    }
    case 'screenshot':
      await page.screenshot({ path: c.path });
      return {};
    case 'mouse': {
      const m = page.mouse;
      if (c.do === 'move') await m.move(c.x, c.y, { steps: c.steps || 1 });
      else if (c.do === 'down') await m.down({ button: c.button || 'left' });
      else if (c.do === 'up') await m.up({ button: c.button || 'left' });
      else if (c.do === 'wheel') await m.wheel({ deltaX: c.deltaX || 0, deltaY: c.deltaY || 0 });
      return {};
    }
    case 'key': {
      const k = page.keyboard;
      if (c.do === 'down') await k.down(c.key);
      else if (c.do === 'up') await k.up(c.key);
      else await k.press(c.key);
      return {};
    }
    case 'type':
      await page.keyboard.sendCharacter(c.text);
      return {};
    case 'keyboard_type':
      await page.keyboard.type(c.text);
      return {};
    case 'keyevents': {
      const cdp = await page.createCDPSession();
      for (const ev of c.events) {
        await cdp.send('Input.dispatchKeyEvent', {
          type: ev.type, key: ev.key, code: ev.code, modifiers: ev.modifiers || 0,
          text: ev.type === 'keyDown' ? (ev.text ?? '') : undefined,
          unmodifiedText: ev.type === 'keyDown' ? (ev.text ?? '') : undefined,
        });
      }
      await cdp.detach();
      return {};
    }
    case 'compose': {
      const cdp = await page.createCDPSession();
      await cdp.send('Input.imeSetComposition', {
        text: c.text, selectionStart: c.text.length, selectionEnd: c.text.length,
      });
      await cdp.detach();
      return {};
    }
    case 'touch':
      await page.touchscreen.tap(c.x, c.y);
      return {};
    case 'pinch': {
      const cdp = await page.createCDPSession();
      await cdp.send('Input.synthesizePinchGesture', {
        x: c.x, y: c.y, scaleFactor: c.scale, gestureSourceType: 'mouse',
      });
      await cdp.detach();
      return {};
    }
    case 'pen': {
      const cdp = await page.createCDPSession();
      for (const ev of c.events) {
        await cdp.send('Input.dispatchMouseEvent', {
          type: ev.type, x: ev.x, y: ev.y, button: ev.button || 'none', buttons: ev.buttons || 0,
          clickCount: ev.type === 'mouseMoved' ? 0 : 1, force: ev.force || 0,
          tiltX: ev.tiltX || 0, tiltY: ev.tiltY || 0, twist: ev.twist || 0, pointerType: 'pen',
        });
      }
      await cdp.detach();
      return {};
    }
    case 'touches': {
      const cdp = await page.createCDPSession();
      for (const ev of c.events) {
        await cdp.send('Input.dispatchTouchEvent', {
          type: ev.type, touchPoints: ev.points.map(([x, y], id) => ({ x, y, id })),
        });
        if (ev.pauseMs) await new Promise((r) => setTimeout(r, ev.pauseMs));
      }
      await cdp.detach();
      return {};
    }
    case 'choose_files': {
      const [chooser] = await Promise.all([page.waitForFileChooser({ timeout: 10000 }),
        page.click(c.click)]);
      await chooser.accept(c.paths);
      return {};
    }
    case 'drop_files': {
      const cdp = await page.createCDPSession();
      const data = { items: [], files: c.paths, dragOperationsMask: 1 };
      for (const type of ['dragEnter', 'dragOver', 'drop']) {
        await cdp.send('Input.dispatchDragEvent', { type, x: c.x, y: c.y, data });
      }
      await cdp.detach();
      return {};
    }
    case 'downloads':
      await browser.defaultBrowserContext().setDownloadBehavior({
        policy: 'allow', downloadPath: c.path,
      });
      return {};
    case 'viewport':
      await page.setViewport({
        width: c.width, height: c.height, isMobile: Boolean(c.mobile), hasTouch: Boolean(c.touch),
        deviceScaleFactor: c.scale || 1,
      });
      return {};
    case 'clipboard':
      await page.evaluate((t) => navigator.clipboard.writeText(t), c.text);
      return {};
    case 'tabs':
      return { tabs: browser.targets().filter((t) => t.type() === 'page').map((t) => ({ url: t.url() })) };
    case 'grant': {
      const cdp = await browser.target().createCDPSession();
      await cdp.send('Browser.grantPermissions', { permissions: c.permissions });
      await cdp.detach();
      return {};
    }
    case 'permission': {
      const cdp = await browser.target().createCDPSession();
      await cdp.send('Browser.setPermission', {
        permission: { name: c.name }, setting: c.setting, origin: new URL(page.url()).origin,
      });
      await cdp.detach();
      return {};
    }
    default:
      throw new Error('unknown op ' + c.op);
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  if (c.op === 'quit') break;
  let reply;
  try {
    reply = await run(c);
  } catch (e) {
    reply = { failure: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
await browser.close();
