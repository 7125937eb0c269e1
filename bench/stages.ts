/**
 * Per-stage micro benchmark of the ingestion pipeline, in process, on the realistic mix of
 * bench/workload.ts: µs per event for validate, classify, enrich, detect, score and store
 * (parts of 100 handed to the SQLite writer thread without waiting, as under load; a temp folder,
 * synchronous=FULL). The sum is CPU-bound work of one event; in the service the store runs on the
 * writer thread, beside the request thread.
 *   npx tsx bench/stages.ts [events]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { CommitGroup } from '../src/pipeline/commit-group.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { toEventResult, toEventRow } from '../src/pipeline/answer.js';
import { validateEvent } from '../src/pipeline/validate.js';
import type { ValidatedEvent } from '../src/event/types.js';
import { createServices } from '../src/services.js';
import { createDetectStage } from '../src/pipeline/detect.js';
import { createScoreStage } from '../src/pipeline/score.js';
import { newId } from '../src/util/ids.js';
import { benchEvent } from './workload.js';

const N = Number(process.argv[2] ?? 50_000);
const dir = mkdtempSync(join(tmpdir(), 'vigil-stages-'));
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: dir, VIGIL_SQLITE_SYNCHRONOUS: process.env.VIGIL_SQLITE_SYNCHRONOUS ?? 'full' }));
const detect = createDetectStage({ state: services.state, clock: services.clock });
const score = createScoreStage();
const account = await services.store.createAccount({ id: 'acc_bench', name: 'bench', plan: 'business', createdAt: Date.now() });
const ctx = { account, plan: services.config.plans.business!, keyId: 'key_bench', keyKind: 'secret' as const };
const classify = createClassifyStage(services.catalog);
const bodies = Array.from({ length: N }, (_, i) => JSON.parse(JSON.stringify(benchEvent(i))) as unknown);
const now = Date.now();

const totals: Record<string, number> = { validate: 0, classify: 0, enrich: 0, detect: 0, score: 0, row: 0 };
const rows = [];
let alertWrites = 0;
const alertTypes = new Map<string, number>();
let eventsWithAlerts = 0;
for (let i = 0; i < N; i++) {
  let t = performance.now();
  const v = validateEvent(bodies[i], { receivedAt: now + i });
  totals.validate! += performance.now() - t;
  if (!v.ok) throw new Error(JSON.stringify(v.errors));
  t = performance.now();
  const c = classify(v.event as ValidatedEvent);
  totals.classify! += performance.now() - t;
  t = performance.now();
  const e = services.enrichment.enrich(c);
  totals.enrich! += performance.now() - t;
  t = performance.now();
  const id = newId('evt');
  const d = await detect(e, ctx, id);
  alertWrites += d.writes.length;
  for (const a of d.alerts) alertTypes.set(a.type, (alertTypes.get(a.type) ?? 0) + 1);
  if (d.alerts.length > 0) eventsWithAlerts++;
  totals.detect! += performance.now() - t;
  t = performance.now();
  const detected = Object.assign(e, d.standing === undefined ? { alerts: d.alerts } : { alerts: d.alerts, standing: d.standing });
  const scored = Object.assign(detected, { id, risk: score(detected, ctx) });
  totals.score! += performance.now() - t;
  t = performance.now();
  rows.push(toEventRow(scored, ctx, toEventResult(scored)));
  totals.row! += performance.now() - t;
}
// As under load: parts of 100 handed over without waiting, the writer thread coalescing what queues up.
const commits = new CommitGroup(services.store, { windowMs: 0, maxEvents: 1000 });
const t0 = performance.now();
const GROUP = 100;
const parts: Promise<void>[] = [];
for (let i = 0; i < rows.length; i += GROUP) parts.push(commits.add({ events: rows.slice(i, i + GROUP), alerts: [], usage: [], idempotency: [] }));
await Promise.all(parts);
const store = performance.now() - t0;

const per = (ms: number) => ((ms * 1000) / N).toFixed(2);
console.table(Object.fromEntries([...Object.entries(totals), ['store (parts of 100, wall)', store] as const].map(([k, v]) => [k, { 'µs/event': per(v) }])));
const pipeline = Object.values(totals).reduce((a, b) => a + b, 0) + store;
console.log(`alerts: ${((100 * eventsWithAlerts) / N).toFixed(1)}% of events raised or updated one; ${(alertWrites / N).toFixed(2)} alert writes per event`);
if (process.env.BENCH_ALERT_TYPES) console.log(Object.fromEntries([...alertTypes].sort((a, b) => b[1] - a[1])));
console.log(`whole pipeline: ${per(pipeline)} µs/event (${Math.round((N / pipeline) * 1000)} events/s on one core)`);
await services.shutdown();
rmSync(dir, { recursive: true, force: true });
