// The page's decoder (web/wire.js) held to wire.c's: the corpus test-wire
// prints (every valid message on every record class from both sides, each
// cut short, each header and fixed-part byte changed four ways, each check
// across fields broken), each byte string read by the page's Reader on its
// class, and its verdict (ok, incomplete or invalid) compared with wire.c's.
//   node tests/web/wire-verdict.mjs BUILD/tests/test-wire BUILD/web
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [testWire, webDir] = process.argv.slice(2);
const { Reader } = await import(pathToFileURL(path.resolve(webDir, 'wire.js')).href);
const corpus = execFileSync(testWire, ['corpus'], { maxBuffer: 1 << 28 }).toString();

function pageVerdict(from, cls, bytes) {
  const reader = new Reader(cls < 0 ? null : cls, from);
  reader.push(bytes);
  try {
    const m = reader.next();
    if (!m) return ['incomplete', ''];
    return [reader.length ? 'trailing' : 'ok', m.message];
  } catch (e) {
    return ['invalid', e.message];
  }
}

let cases = 0;
const wrong = [];
const counts = {};
for (const line of corpus.split('\n')) {
  if (!line.startsWith('case ')) continue;
  const [, from, cls, hex, expected] = line.split(' ');
  const bytes = Uint8Array.from(hex.match(/../g) || [], (h) => parseInt(h, 16));
  const [got, detail] = pageVerdict(from, Number(cls), bytes);
  cases++;
  counts[expected] = (counts[expected] || 0) + 1;
  if (got !== expected) wrong.push(`${from} class ${cls} ${hex.slice(0, 48)}: wire.c ${expected}, the page ${got} ${detail}`);
}
console.log(`${cases} byte strings (${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}); ` +
  `${wrong.length} verdicts differ`);
for (const w of wrong.slice(0, 30)) console.log(w);
if (!cases || wrong.length) process.exit(1);
