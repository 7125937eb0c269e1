/**
 * CPU per event of each stage of the ingestion pipeline, in process, on the realistic mix of
 * bench/workload.ts (half of the events carrying an event_id, as the official clients send them).
 * process.cpuUsage() (user + system, every thread of the process) around each stage's loop over a
 * chunk of events, so a loaded machine disturbs it far less than wall-clock rates. Stages:
 *   validate, dedupe (Store.findIdempotency, a miss, against a table already holding 20,000 keys),
 *   classify, enrich (the shipped GeoIP and ASN data), detect (every detector, in-memory state),
 *   score, row (the answer and the stored row), commit (groups of 100 through the commit group to
 *   the SQLite writer thread, a database file, synchronous=FULL, waited for: the request thread's
 *   statements and hand-off plus the writer's transaction and fsync) and response (the 202 body).
 * Then how often detectors fire, each enrichment part's open time, and the feed table's lookup
 * cost at 100,000 ranges.
 *   npx tsx bench/stages.ts [events=50000]
 *   BENCH_ALERT_TYPES=1 also lists the alerts raised by type.
 * Compare two versions in one session, alternating runs (A B A B), and report medians.
 */
import { fullScopes } from '../src/event/account.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import type { EnrichedEvent, ScoredEvent, ValidatedEvent } from '../src/event/types.js';
import { FeedSnapshot } from '../src/enrichment/feeds/snapshot.js';
import { parseIpFeed } from '../src/enrichment/feeds/parse.js';
import { eventResultJson, toEventResult, toEventRow, type EventResult } from '../src/pipeline/answer.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { CommitGroup } from '../src/pipeline/commit-group.js';
import { IDEMPOTENCY_WINDOW_MS } from '../src/pipeline/dedupe.js';
import { createDetectStage } from '../src/pipeline/detect.js';
import { createScoreStage } from '../src/pipeline/score.js';
import { validateEvent } from '../src/pipeline/validate.js';
import { createServices } from '../src/services.js';
import type { CommitBatch, IdempotencyRow, NewEventRow } from '../src/storage/types.js';
import { newId } from '../src/util/ids.js';
import { parseAddress } from '../src/util/ip.js';
import { benchEvent } from './workload.js';

const N = Number(process.argv[2] ?? 50_000);
const CHUNK = 5000;
const GROUP = 100;
const dir = mkdtempSync(join(tmpdir(), 'vigil-stages-'));
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: dir, VIGIL_SQLITE_SYNCHRONOUS: process.env.VIGIL_SQLITE_SYNCHRONOUS ?? 'full' }));
const detect = createDetectStage({ state: services.state, clock: services.clock });
const score = createScoreStage();
const account = await services.store.accounts.createAccount({ id: 'acc_bench', name: 'bench', plan: 'business', createdAt: Date.now() });
const ctx = {
  account,
  plan: services.config.plans.business!,
  keyId: 'key_bench',
  keyKind: 'secret' as const,
  principal: { kind: 'key' as const, keyId: 'key_bench', keyPrefix: 'vgl_sk_bench', scopes: fullScopes('secret') },
};
const classify = createClassifyStage(services.catalog);
const commits = new CommitGroup(services.store, { windowMs: 0, maxEvents: 1000 });
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

const bodyOf = (i: number): unknown => JSON.parse(JSON.stringify(i % 2 === 0 ? Object.assign(benchEvent(i), { event_id: `evt-${i}` }) : benchEvent(i)));
const STAGES = ['validate', 'dedupe', 'classify', 'enrich', 'detect', 'score', 'row', 'commit', 'response'] as const;
type Stage = (typeof STAGES)[number];
const cpu = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
let since = process.cpuUsage();
const lap = (stage: Stage) => {
  const d = process.cpuUsage(since);
  cpu[stage] += d.user + d.system;
  since = process.cpuUsage();
};

let sink = 0;
let done = 0;
let eventsWithAlerts = 0;
let alertWrites = 0;
let commitWallMs = 0;
const alertTypes = new Map<string, number>();
for (let round = 0; done < N; round++) {
  const n = Math.min(CHUNK, N - done);
  const bodies = Array.from({ length: n }, (_, k) => bodyOf(round * CHUNK + k));
  since = process.cpuUsage();
  const validated: ValidatedEvent[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const v = validateEvent(bodies[k], { receivedAt: now + done + k });
    if (!v.ok) throw new Error(JSON.stringify(v.errors));
    validated[k] = v.event;
  }
  lap('validate');
  for (let k = 0; k < n; k++) {
    const eventId = validated[k]!.eventId;
    if (eventId !== undefined) sink += (await services.store.events.findIdempotency(account.id, [eventId], now - IDEMPOTENCY_WINDOW_MS)).size;
  }
  lap('dedupe');
  const classified = validated.map((v) => classify(v));
  lap('classify');
  const enriched: EnrichedEvent[] = classified.map((c) => services.enrichment.enrich(c));
  lap('enrich');
  const ids = enriched.map(() => newId('evt'));
  const detections: Awaited<ReturnType<typeof detect>>[] = [];
  for (let k = 0; k < n; k++) detections.push(await detect(enriched[k]!, ctx, ids[k]));
  lap('detect');
  const scored: ScoredEvent[] = enriched.map((e, k) => {
    const d = detections[k]!;
    const detected = Object.assign(e, d.standing === undefined ? { alerts: d.alerts } : { alerts: d.alerts, standing: d.standing });
    return Object.assign(detected, { id: ids[k]!, risk: score(detected, ctx) });
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
    if (k % GROUP === GROUP - 1 || k === n - 1) {
      groups.push({ events: rows.slice(k - (k % GROUP), k + 1), alerts: [], usage: [], idempotency });
      idempotency = [];
    }
  }
  lap('row');
  // As under load: groups handed over without waiting for each other, the writer coalescing what queues up.
  const t = performance.now();
  await Promise.all(groups.map((g) => commits.add(g)));
  commitWallMs += performance.now() - t;
  lap('commit');
  for (let k = 0; k < n; k++) sink += eventResultJson(results[k]!).length;
  lap('response');
  for (const d of detections) {
    alertWrites += d.writes.length;
    if (d.alerts.length > 0) eventsWithAlerts++;
    for (const a of d.alerts) alertTypes.set(a.type, (alertTypes.get(a.type) ?? 0) + 1);
  }
  done += n;
}

const per = (us: number) => Number((us / N).toFixed(2));
const total = STAGES.reduce((a, s) => a + cpu[s], 0);
console.table(Object.fromEntries(STAGES.map((s) => [s, { 'CPU µs/event': per(cpu[s]) }])));
console.log(`all stages: ${per(total)} µs/event (without detect ${per(total - cpu.detect)}); commit wall ${per(commitWallMs * 1000)} µs/event`);
console.log(`alerts: ${((100 * eventsWithAlerts) / N).toFixed(1)}% of events raised or updated one; ${(alertWrites / N).toFixed(2)} alert writes per event`);
if (process.env.BENCH_ALERT_TYPES) console.log(Object.fromEntries([...alertTypes].sort((a, b) => b[1] - a[1])));

const status = services.enrichment.status() as Record<string, { openMs?: number }>;
console.log(`enrichment open ms: geoip ${status.geoip?.openMs}, asn ${status.asn?.openMs}, feeds ${status.feeds?.openMs}`);

// The feed table's lookup alone, at 100k ranges: 80k IPv4 /24s and 20k IPv6 /48s, every other block, so none merge.
const lines: string[] = [];
for (let i = 0; i < 80_000; i++) lines.push(`${20 + ((2 * i) >> 16)}.${((2 * i) >> 8) & 255}.${(2 * i) & 255}.0/24`);
for (let i = 0; i < 20_000; i++) lines.push(`2a00:${(2 * i).toString(16)}::/48`);
const snap = FeedSnapshot.build([{ file: 'blocklist.txt', name: 'blocklist', kind: 'blocklist', ip: parseIpFeed(lines.join('\n')) }]);
const probes = Array.from({ length: 4096 }, (_, i) =>
  parseAddress(i % 5 === 4 ? `2a00:${((i * 7919) % 40000).toString(16)}::1` : `${20 + (i % 3)}.${(i * 31) & 255}.${(i * 17) & 255}.9`)!,
);
for (let i = 0; i < 200_000; i++) sink += snap.lookup(probes[i & 4095]!, undefined).blocklists.length;
const l0 = performance.now();
const LOOKUPS = 2_000_000;
for (let i = 0; i < LOOKUPS; i++) sink += snap.lookup(probes[i & 4095]!, undefined).blocklists.length;
console.log(`feed lookup at 100,000 ranges (${JSON.stringify(snap.ranges)}): ${(((performance.now() - l0) * 1e6) / LOOKUPS).toFixed(0)} ns (sink ${sink > 0})`);

await services.shutdown();
rmSync(dir, { recursive: true, force: true });
