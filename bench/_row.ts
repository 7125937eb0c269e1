import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { toEventResult, toEventRow, snakeEnrichmentJson } from '../src/pipeline/answer.js';
import type { ScoredEvent } from '../src/event/types.js';
import { validateEvent } from '../src/pipeline/validate.js';
import { createServices } from '../src/services.js';
import { createScoreStage } from '../src/pipeline/score.js';
import { newId } from '../src/util/ids.js';
import { benchEvent } from './workload.js';
const dir = mkdtempSync(join(tmpdir(), 'vigil-row-'));
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: dir }));
const score = createScoreStage();
const account = await services.store.createAccount({ id: 'acc_bench', name: 'bench', plan: 'business', createdAt: Date.now() });
const ctx = { account, plan: services.config.plans.business!, keyId: 'key_bench', keyKind: 'secret' as const };
const classify = createClassifyStage(services.catalog);
const now = Date.now();
const M = 200;
const scored: ScoredEvent[] = [];
for (let i = 0; i < M; i++) {
  const body = JSON.parse(JSON.stringify(i % 2 === 0 ? { ...benchEvent(i), event_id: `evt-${i}` } : benchEvent(i)));
  const v = validateEvent(body, { receivedAt: now });
  if (!v.ok) throw new Error('bad');
  const e = services.enrichment.enrich(classify(v.event));
  const d = Object.assign(e, { alerts: [] });
  scored.push(Object.assign(d, { id: newId('evt', now), risk: score(d, ctx) }));
}
const N = 100_000;
function time(name: string, f: (s: ScoredEvent) => unknown) {
  for (let r = 0; r < 3; r++) {
    const t = process.cpuUsage();
    let sink = 0;
    for (let i = 0; i < N; i++) sink += f(scored[i % M]!) ? 1 : 0;
    const d = process.cpuUsage(t);
    if (r === 2) console.log(name.padEnd(22), ((d.user + d.system) / N).toFixed(2), 'µs', sink > 0);
  }
}
time('toEventResult', (s) => toEventResult(s));
const results = scored.map((s) => toEventResult(s));
time('toEventRow', (s) => toEventRow(s, ctx, results[scored.indexOf(s)]!));
time('snakeEnrichmentJson', (s) => snakeEnrichmentJson(s.enrichment));
time('stringify metadata', (s) => JSON.stringify(s.metadata));
time('stringify request', (s) => JSON.stringify(s.request));
time('stringify risk', (s) => JSON.stringify(s.risk));
time('indexOf', (s) => scored.indexOf(s) + 1);
console.log(JSON.stringify(scored[3]!.enrichment).length, toEventRow(scored[3]!, ctx, results[3]!).docJson.length);
console.log(Object.keys(scored[3]!.enrichment), Object.entries(scored[3]!.enrichment).map(([k, v]) => [k, Object.isFrozen(v)]));
await services.shutdown();
console.log(JSON.stringify(results[3]), JSON.stringify(results[4]));
console.log(toEventRow(scored[3]!, ctx, results[3]!).docJson);
