/**
 * Request-thread CPU per event, per stage, without detection: process.cpuUsage() (user + system)
 * around each stage's loop over a chunk of events, so a loaded machine disturbs it far less than
 * wall-clock rates. Stages: validate, dedupe (store.findIdempotency, a miss, for the half of the
 * mix carrying an event_id, against a table already holding 20,000 keys), classify, enrich,
 * score (adding its fields to the event as the pipeline does), row (toEventResult + toEventRow), writes (toSqliteWrites
 * per group of 100, idempotency rows included) and response (the 202 body text, as src/http/routes/ingest.ts sends it).
 *   npx tsx bench/cpu-stages.ts [events]
 * Compare two versions in one session, alternating runs (A B A B), and report medians.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { IDEMPOTENCY_WINDOW_MS } from '../src/pipeline/dedupe.js';
import { eventResultJson, toEventResult, toEventRow, type EventResult } from '../src/pipeline/answer.js';
import type { EnrichedEvent, ScoredEvent, ValidatedEvent } from '../src/event/types.js';
import { validateEvent } from '../src/pipeline/validate.js';
import { createServices } from '../src/services.js';
import { createScoreStage } from '../src/pipeline/score.js';
import { toSqliteWrites } from '../src/storage/sqlite-writes.js';
import type { CommitBatch, IdempotencyRow, NewEventRow } from '../src/storage/types.js';
import { newId } from '../src/util/ids.js';
import { benchEvent } from './workload.js';

const N = Number(process.argv[2] ?? 100_000);
const CHUNK = 5000;
const dir = mkdtempSync(join(tmpdir(), 'vigil-cpu-'));
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: dir }));
const score = createScoreStage();
const account = await services.store.createAccount({ id: 'acc_bench', name: 'bench', plan: 'business', createdAt: Date.now() });
const ctx = { account, plan: services.config.plans.business!, keyId: 'key_bench', keyKind: 'secret' as const };
const classify = createClassifyStage(services.catalog);
const now = Date.now();

// Keys from earlier traffic, so the lookups search a real index.
const response = { status: 'dropped' };
for (let i = 0; i < 20_000; i += 1000) {
  const idempotency = Array.from({ length: 1000 }, (_, k) => ({
    accountId: account.id,
    eventId: `old-${i + k}`,
    response,
    createdAt: now,
    payloadDigest: null,
  }));
  await services.store.commit({ events: [], alerts: [], usage: [], idempotency });
}

const bodyOf = (i: number): unknown => JSON.parse(JSON.stringify(i % 2 === 0 ? { ...benchEvent(i), event_id: `evt-${i}` } : benchEvent(i)));
const stages = ['validate', 'dedupe', 'classify', 'enrich', 'score', 'row', 'writes', 'response'] as const;
const cpu: Record<(typeof stages)[number], number> = Object.fromEntries(stages.map((s) => [s, 0])) as never;
let since = process.cpuUsage();
const lap = (stage: (typeof stages)[number]) => {
  const d = process.cpuUsage(since);
  cpu[stage] += d.user + d.system;
  since = process.cpuUsage();
};

let sink = 0;
let done = 0;
for (let round = 0; done < N; round++) {
  const n = Math.min(CHUNK, N - done);
  const bodies = Array.from({ length: n }, (_, k) => bodyOf(round * CHUNK + k));
  since = process.cpuUsage();
  const validated: ValidatedEvent[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const v = validateEvent(bodies[k], { receivedAt: now + k });
    if (!v.ok) throw new Error(JSON.stringify(v.errors));
    validated[k] = v.event;
  }
  lap('validate');
  for (let k = 0; k < n; k++) {
    const eventId = validated[k]!.eventId;
    if (eventId !== undefined) sink += (await services.store.findIdempotency(account.id, [eventId], now - IDEMPOTENCY_WINDOW_MS)).size;
  }
  lap('dedupe');
  const classified = validated.map((v) => classify(v));
  lap('classify');
  const enriched: EnrichedEvent[] = classified.map((c) => services.enrichment.enrich(c));
  lap('enrich');
  const scored: ScoredEvent[] = enriched.map((e) => {
    const detected = Object.assign(e, { alerts: [] });
    return Object.assign(detected, { id: newId('evt', now), risk: score(detected, ctx) });
  });
  lap('score');
  const results: EventResult[] = new Array(n);
  const rows: NewEventRow[] = new Array(n);
  const groups: CommitBatch[] = [];
  let idempotency: IdempotencyRow[] = [];
  for (let k = 0; k < n; k++) {
    const s = scored[k]!;
    const result = (results[k] = toEventResult(s));
    rows[k] = toEventRow(s, ctx, result);
    if (s.eventId !== undefined)
      idempotency.push({ accountId: account.id, eventId: s.eventId, response: result, createdAt: now, payloadDigest: s.payloadDigest ?? null });
    if (k % 100 === 99 || k === n - 1) {
      groups.push({ events: rows.slice(k - (k % 100), k + 1), alerts: [], usage: [], idempotency });
      idempotency = [];
    }
  }
  lap('row');
  for (const group of groups) sink += toSqliteWrites(group).events.length;
  lap('writes');
  for (let k = 0; k < n; k++) sink += eventResultJson(results[k]!).length;
  lap('response');
  done += n;
}

const per = (us: number) => Number((us / N).toFixed(2));
const total = stages.reduce((a, s) => a + cpu[s], 0);
console.log(JSON.stringify({ events: N, ...Object.fromEntries(stages.map((s) => [s, per(cpu[s])])), total: per(total), sink: sink > 0 }));
await services.shutdown();
