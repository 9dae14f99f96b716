// Opens the browser viewer's page in Debian's chromium (headless) and
// prints what the tests ask of it as one line of JSON:
//   node view.mjs URL window TITLE   the window's canvas once it has drawn
//   node view.mjs URL error          the page's error, and its windows
import puppeteer from 'puppeteer-core';

const [url, mode, arg] = process.argv.slice(2);
const timeout = 30000;
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: 'new',
  args: ['--no-sandbox', '--disable-gpu'],
});
const result = {};
try {
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  page.on('pageerror', (e) => logs.push('pageerror: ' + e.message));
  const started = Date.now();
  await page.goto(url);
  result.loadMs = Date.now() - started;
  result.logs = logs;
  if (mode === 'window') {
    await page.waitForFunction((title) => window.rcomp && window.rcomp.stats()
      .some((w) => w.title === title && w.presented > 0), { timeout }, arg);
    result.firstWindowMs = Date.now() - started;
    // Still: no frame for half a second.
    let last = -1;
    for (;;) {
      const n = await page.evaluate((title) => window.rcomp.stats()
        .find((w) => w.title === title).presented, arg);
      if (n === last) break;
      last = n;
      await new Promise((r) => setTimeout(r, 500));
    }
    Object.assign(result, await page.evaluate((title) => {
      const el = [...document.querySelectorAll('.rcomp-window')].find((e) => e.dataset.title === title);
      const c = el.querySelector('canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let s = '';
      for (let i = 0; i < d.length; i += 32768) s += String.fromCharCode(...d.subarray(i, i + 32768));
      return { title: el.dataset.title, appId: el.dataset.appId, width: c.width, height: c.height,
        rgba: btoa(s), stats: window.rcomp.stats() };
    }, arg));
  } else if (mode === 'error') {
    await page.waitForSelector('#rcomp-error', { timeout });
    result.error = await page.$eval('#rcomp-error', (e) => e.textContent);
    await new Promise((r) => setTimeout(r, 500));
    result.windows = await page.evaluate(() => document.querySelectorAll('.rcomp-window').length);
  }
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
