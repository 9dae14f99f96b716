// Many browser viewers in one headless chromium, for the benches
// (tools/bench_gate.py): node pages.mjs PLAN.json, where PLAN is
//   {"pages": [{"url": U, "cookie": {"name", "value", "url"} | null}],
//    "warm": S, "seconds": S}
// Each page is opened (with its cookie set first; a load that fails is
// tried again, twice at most: a chromium starved of CPU can be too slow for
// a door's deadline for a request's headers). Once every page shows a
// window (or after two minutes), and warm seconds more, the frames each
// page presents (window.rcomp.stats(), all its windows) are counted over
// seconds. Prints one line of JSON in the plan's order:
// [{"fps", "windows", "tries", "says": the text of a page with no window}];
// a failure prints {"failure": message} and exits 1.
import { readFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: 'new',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows',
    // A renderer process for each page, as a browser of its own would have
    // (past its cap chromium puts pages into processes with others).
    '--renderer-process-limit=1000'],
  defaultViewport: { width: 640, height: 480 },
});
const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));

async function presented(page) {
  return page.evaluate(() => {
    const s = window.rcomp ? window.rcomp.stats() : [];
    return {
      frames: s.reduce((n, w) => n + w.presented, 0),
      windows: s.length,
      // What a page with no window shows instead (a door's refusal).
      says: s.length ? undefined : document.body.innerText.slice(0, 200),
    };
  });
}

try {
  const pages = [], tries = [];
  for (const p of plan.pages) {
    const page = await browser.newPage();
    // Every page painted as the one in front is: a tab behind would stop
    // drawing, and so stop acking its frames.
    const cdp = await page.createCDPSession();
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: true });
    if (p.cookie) await page.setCookie(p.cookie);
    for (let n = 1; ; n++) {
      try {
        await page.goto(p.url, { waitUntil: 'domcontentloaded', timeout: 60000 });
        tries.push(n);
        break;
      } catch (e) {
        if (n >= 3) throw new Error(`page ${pages.length}: ${e.message}`);
        process.stderr.write(`pages: ${p.url}: ${e.message}; loading it again\n`);
      }
    }
    pages.push(page);
  }
  // A starved chromium can take long to show the last pages' windows.
  for (const end = Date.now() + 120000; Date.now() < end; await sleep(1)) {
    const now = await Promise.all(pages.map(presented));
    if (now.every((n) => n.windows > 0)) break;
  }
  await sleep(plan.warm);
  const before = await Promise.all(pages.map(presented));
  await sleep(plan.seconds);
  const after = await Promise.all(pages.map(presented));
  process.stdout.write(JSON.stringify(after.map((a, i) => ({
    fps: (a.frames - before[i].frames) / plan.seconds, windows: a.windows, tries: tries[i],
    says: a.says,
  }))) + '\n');
  await browser.close();
} catch (e) {
  process.stdout.write(JSON.stringify({ failure: String(e) }) + '\n');
  await browser.close();
  process.exit(1);
}
