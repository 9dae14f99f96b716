// Many browser viewers in one headless chromium, for the benches
// (tools/bench_gate.py): node pages.mjs PLAN.json, where PLAN is
//   {"pages": [{"url": U, "cookie": {"name", "value", "url"} | null}],
//    "warm": S, "seconds": S}
// Each page is opened (with its cookie set first), then after warm seconds
// the frames each page presented (window.rcomp.stats(), all its windows)
// are counted over seconds; prints one line of JSON: [{"fps", "windows"}]
// in the plan's order. Failures print {"failure": message} and exit 1.
import { readFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: 'new',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'],
  defaultViewport: { width: 640, height: 480 },
});
const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));

async function presented(page) {
  return page.evaluate(() => {
    const s = window.rcomp ? window.rcomp.stats() : [];
    return { frames: s.reduce((n, w) => n + w.presented, 0), windows: s.length };
  });
}

try {
  const pages = [];
  for (const p of plan.pages) {
    const page = await browser.newPage();
    // Every page painted as the one in front is: a tab behind would stop
    // drawing, and so stop acking its frames.
    const cdp = await page.createCDPSession();
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: true });
    if (p.cookie) await page.setCookie(p.cookie);
    await page.goto(p.url, { waitUntil: 'domcontentloaded', timeout: 60000 });
    pages.push(page);
  }
  await sleep(plan.warm);
  const before = await Promise.all(pages.map(presented));
  await sleep(plan.seconds);
  const after = await Promise.all(pages.map(presented));
  process.stdout.write(JSON.stringify(after.map((a, i) => ({
    fps: (a.frames - before[i].frames) / plan.seconds, windows: a.windows,
  }))) + '\n');
  await browser.close();
} catch (e) {
  process.stdout.write(JSON.stringify({ failure: String(e) }) + '\n');
  await browser.close();
  process.exit(1);
}
