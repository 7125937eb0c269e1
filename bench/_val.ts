import { createHash, hash } from 'node:crypto';
import { validateEvent } from '../src/pipeline/validate.js';
import { canonicalJson } from '../src/util/json-text.js';
import { benchEvent } from './workload.js';
const now = Date.now();
const M = 5000;
const withId = Array.from({ length: M }, (_, i) => JSON.stringify({ ...benchEvent(i), event_id: `evt-${i}` }));
const without = Array.from({ length: M }, (_, i) => JSON.stringify(benchEvent(i)));
const N = 200_000;
function time(name: string, f: (i: number) => unknown) {
  for (let r = 0; r < 3; r++) {
    let ns = 0;
    for (let i = 0; i < N; i++) {
      const t = process.hrtime.bigint();
      f(i);
      ns += Number(process.hrtime.bigint() - t);
    }
    if (r === 2) console.log(name.padEnd(20), (ns / N / 1000).toFixed(2), 'µs');
  }
}
const pw = withId.map((s) => JSON.parse(s));
const po = without.map((s) => JSON.parse(s));
time('empty', () => 0);
time('parse', (i) => JSON.parse(withId[i % M]!));
time('validate with id', (i) => validateEvent(pw[i % M], { receivedAt: now }));
time('validate no id', (i) => validateEvent(po[i % M], { receivedAt: now }));
time('canonical', (i) => canonicalJson(pw[i % M]));
const texts = pw.map((p) => canonicalJson(p));
time('sha256 hash()', (i) => hash('sha256', texts[i % M]!, 'hex'));
time('sha256 createHash', (i) => createHash('sha256').update(texts[i % M]!).digest('hex'));
time('stringify', (i) => JSON.stringify(pw[i % M]));
console.log(texts[0]);
