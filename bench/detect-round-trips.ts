/**
 * Redis round trips of one request's detection ("one round trip per event for
 * detection state, pipelined for batches"). Batches of 100 events (benign users' traffic with
 * the firing detector scenarios mixed in) go through the detect stage on Redis twice: one event
 * after the other, and as one pipelined batch (DetectStage.many). Per batch: the round trips on
 * the critical path (a call sent after an answer arrived waits one more round trip than that
 * answer), the calls and the ops sent, and the time, as a ratio pipelined / one by one.
 *
 *   npx tsx bench/detect-round-trips.ts [--batches 200]
 * Redis: VIGIL_BENCH_REDIS_URL (default redis://127.0.0.1:6379; a fresh key prefix, deleted afterwards).
 */
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../test/helpers/redis-keys.js';
import { RedisStateStore } from '../src/redis/state-store.js';
import type { StateOp, StateStore } from '../src/detection/state/state-store.js';
import { createDetectStage, type DetectStage } from '../src/pipeline/detect.js';
import { ManualClock } from '../src/util/clock.js';
import { benignDay, benignUsers } from '../test/detection/benign-traffic.js';
import { expand, loadScenarios } from '../test/detection/fixtures.js';
import { accountContext, enriched, type EventSpec } from '../test/detection/helpers.js';

const REDIS_URL = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const i = process.argv.indexOf('--batches');
const BATCHES = i > 0 ? Number(process.argv[i + 1]) : 200;
const DAY = 86_400_000;

/** Counts the calls to a store and the depth of each: one more than the deepest answer seen before it was sent. */
class CountingStore implements StateStore {
  readonly kind = 'redis' as const;
  calls = 0;
  ops = 0;
  private answeredDepth = 0;
  maxDepth = 0;
  constructor(private readonly inner: StateStore) {}
  async run<const T extends readonly StateOp[]>(ops: T) {
    this.calls++;
    this.ops += ops.length;
    const depth = this.answeredDepth + 1;
    this.maxDepth = Math.max(this.maxDepth, depth);
    const results = await this.inner.run(ops);
    this.answeredDepth = Math.max(this.answeredDepth, depth);
    return results;
  }
  scope = (accountId: string) => this.inner.scope(accountId);
  newRequest(): void {
    this.answeredDepth = 0;
    this.maxDepth = 0;
  }
  ping = () => this.inner.ping();
  close = () => this.inner.close();
}

function stream(): EventSpec[] {
  const users = benignUsers(500);
  const specs: EventSpec[] = [];
  for (let day = 0; specs.length < BATCHES * 100; day++) {
    specs.push(...benignDay(users, day * DAY, 1000 + day, day < 3 ? 'history' : 'full'));
    // Attacks land inside the request batches: each firing scenario, shifted to this day.
    for (const { scenario } of loadScenarios())
      if (scenario.expect.alerts.length > 0 && !scenario.settings)
        specs.push(...expand(scenario).map((e) => ({ ...e, at: e.at + day * DAY, actor: e.actor === undefined ? undefined : `${e.actor}~${day}` })));
  }
  return specs.sort((a, b) => (a.at as number) - (b.at as number)).slice(0, BATCHES * 100);
}

interface Totals {
  roundTrips: number;
  calls: number;
  ops: number;
  ms: number;
}

async function measure(detect: DetectStage, store: CountingStore, batches: readonly EventSpec[][], pipelined: boolean): Promise<Totals> {
  const ctx = accountContext();
  const totals: Totals = { roundTrips: 0, calls: 0, ops: 0, ms: 0 };
  let n = 0;
  for (const batch of batches) {
    const items = batch.map((spec) => ({ event: enriched(spec), eventId: `evt_${n++}` }));
    store.newRequest();
    const [calls, ops] = [store.calls, store.ops];
    const started = performance.now();
    if (pipelined) await detect.many(items, ctx);
    else for (const { event, eventId } of items) await detect(event, ctx, eventId);
    totals.ms += performance.now() - started;
    totals.roundTrips += store.maxDepth;
    totals.calls += store.calls - calls;
    totals.ops += store.ops - ops;
  }
  return totals;
}

async function main(): Promise<void> {
  const redis = new Redis(REDIS_URL);
  const prefix = `vigil-bench:round-trips:${process.pid}:`;
  const specs = stream();
  const batches = Array.from({ length: BATCHES }, (_, b) => specs.slice(b * 100, b * 100 + 100));
  const rows: Record<string, string | number>[] = [];
  try {
    const results: Record<string, Totals> = {};
    for (const mode of ['one by one', 'pipelined'] as const) {
      const store = new CountingStore(new RedisStateStore(redis, { prefix: `${prefix}${mode}:` }));
      const detect = createDetectStage({ state: store, clock: new ManualClock() });
      const totals = await measure(detect, store, batches, mode === 'pipelined');
      results[mode] = totals;
      const per = (x: number) => +(x / BATCHES).toFixed(1);
      rows.push({
        mode,
        'round trips/batch': per(totals.roundTrips),
        'calls/batch': per(totals.calls),
        'ops/batch': per(totals.ops),
        'ms/batch': +(totals.ms / BATCHES).toFixed(2),
      });
    }
    console.table(rows);
    const [a, b] = [results['one by one'] as Totals, results.pipelined as Totals];
    console.log(
      `pipelined / one by one: round trips ${(b.roundTrips / a.roundTrips).toFixed(3)}, time ${(b.ms / a.ms).toFixed(3)} (${BATCHES} batches of 100)`,
    );
  } finally {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
