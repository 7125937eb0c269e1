/**
 * Where a single event costs more than an event in a batch: the request thread's CPU per event of
 * the ingestion pipeline alone (no HTTP), in process on the built service's modules, for single
 * events and for batches of 100, with 16 requests in flight, in variants that replace stages by
 * stand-ins answering at once. The difference between two variants is what the replaced stages
 * cost the request thread, per event:
 *   full           every stage, commits through the SQLite writer thread to a database file
 *   no-store       the store stage answers at once (no commit group, no hand-off, no writer)
 *   no-detect      no-store, and detection answers "nothing found" without touching state
 * CPU is the main thread's own (user + system from /proc/self/task/<pid>/stat, 10 ms ticks), so
 * the writer thread and V8's helper threads are not in it. Prints each round and the median.
 *   npm run build && npx tsx bench/pipeline-cost.ts
 *   KIND=single|batch (both)  VARIANTS=full,no-store,no-detect  ROUNDS=3  SECONDS_PER_ROUND=6
 *   EVENT_IDS=1: every event carries a new event_id, as the official clients send them (time-ordered,
 *   UUIDv7 layout), so the idempotency lookup, claim and row are in the measurement
 */
import { fullScopes } from '../src/event/account.js';
import { readFileSync, rmSync } from 'node:fs';
import type { DetectStage } from '../src/pipeline/detect.js';
import type { IngestStages } from '../src/pipeline/compose.js';
import { bodies, inProcessEnv, newEventId } from './lib.js';

const dist = new URL('../dist/src/', import.meta.url);
const { loadConfig } = (await import(new URL('config/config.js', dist).href)) as typeof import('../src/config/config.js');
const { createServices } = (await import(new URL('services.js', dist).href)) as typeof import('../src/services.js');
const { CommitGroup } = (await import(new URL('pipeline/commit-group.js', dist).href)) as typeof import('../src/pipeline/commit-group.js');
const { composeStages, inOrder } = (await import(new URL('pipeline/compose.js', dist).href)) as typeof import('../src/pipeline/compose.js');
const { detectStage } = (await import(new URL('pipeline/detect.js', dist).href)) as typeof import('../src/pipeline/detect.js');
const { storeStage } = (await import(new URL('pipeline/store.js', dist).href)) as typeof import('../src/pipeline/store.js');
const { createIngestPipeline } = (await import(new URL('pipeline/ingest-pipeline.js', dist).href)) as typeof import('../src/pipeline/ingest-pipeline.js');
const { NO_DETECTION } = (await import(new URL('detection/engine.js', dist).href)) as typeof import('../src/detection/engine.js');
const { newId } = (await import(new URL('util/ids.js', dist).href)) as typeof import('../src/util/ids.js');

const KINDS = (process.env.KIND ?? 'single,batch').split(',') as ('single' | 'batch')[];
const VARIANTS = (process.env.VARIANTS ?? 'full,no-store,no-detect').split(',');
const unknown = [...KINDS.filter((k) => k !== 'single' && k !== 'batch'), ...VARIANTS.filter((v) => !['full', 'no-store', 'no-detect'].includes(v))];
if (unknown.length > 0) throw new Error(`unknown KIND or VARIANTS value: ${unknown.join(', ')} (KIND: single, batch; VARIANTS: full, no-store, no-detect)`);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS_PER_ROUND = Number(process.env.SECONDS_PER_ROUND ?? 6);
const IN_FLIGHT = 16;
const EVENT_IDS = process.env.EVENT_IDS === '1';

/** The body as the HTTP route hands it over: parsed from its text; with EVENT_IDS, each event gets a new event_id. */
function parsedBody(text: string, kind: 'single' | 'batch'): unknown {
  const body = JSON.parse(text) as { event_id?: string; events?: { event_id?: string }[] };
  if (EVENT_IDS) for (const event of kind === 'batch' ? (body.events ?? []) : [body]) event.event_id = newEventId();
  return body;
}

/** CPU seconds the process's main thread has used so far. */
function mainThreadSeconds(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const noDetection: DetectStage = Object.assign(async () => NO_DETECTION, {
  many: async (items: readonly unknown[]) => items.map(() => NO_DETECTION),
});

async function measure(kind: 'single' | 'batch', variant: string): Promise<number[]> {
  const { dir, env } = inProcessEnv('pipeline-cost');
  const config = loadConfig(env);
  const services = await createServices(config);
  const account = await services.store.accounts.createAccount({ id: newId('acc', Date.now()), name: 'bench', plan: 'bench', createdAt: Date.now() });
  const plan = config.plans.bench;
  if (plan === undefined) throw new Error('the bench plan is missing');
  const req = {
    account: {
      account,
      plan,
      keyId: 'key_bench',
      keyKind: 'secret' as const,
      principal: { kind: 'key' as const, keyId: 'key_bench', keyPrefix: 'vgl_sk_bench', scopes: fullScopes('secret') },
    },
    connectingIp: '127.0.0.1',
  };
  const commits = new CommitGroup(services.store, { windowMs: 0, maxEvents: config.commitMaxEvents });
  const real = composeStages(services, commits);
  const stages: IngestStages = {
    ...real,
    store: variant === 'full' ? real.store : storeStage(async () => undefined),
    detect: variant === 'no-detect' ? detectStage(noDetection) : real.detect,
  };
  const pipeline = createIngestPipeline(inOrder(stages), { clock: services.clock });
  const perRequest = kind === 'batch' ? 100 : 1;
  const payloads = bodies(kind === 'batch' ? 200 : 5000, perRequest);
  let next = 0;
  let events = 0;
  let until = 0;
  const sender = async () => {
    while (Date.now() < until) {
      const body = parsedBody(payloads[next++ % payloads.length] as string, kind);
      const outcome = await pipeline.ingest({ kind, body }, req);
      if (!outcome.ok) throw new Error(`${outcome.rejection.code}: ${outcome.rejection.message}`);
      events += perRequest;
    }
  };
  const run = async (seconds: number) => {
    until = Date.now() + seconds * 1000;
    events = 0;
    const before = mainThreadSeconds();
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    return ((mainThreadSeconds() - before) * 1e6) / events;
  };
  await run(2);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await run(SECONDS_PER_ROUND));
  await commits.flush();
  await services.shutdown();
  rmSync(dir, { recursive: true, force: true });
  return rounds;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const table: Record<string, string | number>[] = [];
for (const kind of KINDS) {
  for (const variant of VARIANTS) {
    const rounds = await measure(kind, variant);
    console.log(`${kind} ${variant}: ${rounds.map((us) => us.toFixed(0)).join(', ')} µs per event`);
    table.push({ kind, variant, 'request thread µs/event (median)': Math.round(median(rounds)) });
  }
}
console.table(table);
