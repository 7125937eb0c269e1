/**
 * The detect and model stages: the built-in detectors, then 0, 10 and 100 enabled threat models
 * per account, on the in-memory state store, one core; µs per event.
 *
 *   npx tsx bench/threat-models.ts [--events 200000]
 *
 * The stream mixes custom events (exports, payments, API calls with metadata) and
 * authentication events of 2,000 actors. The models mix every kind: field conditions of each op
 * (regex and wildcard on RE2JS included), count and distinct thresholds, ordered and unordered
 * sequences, and Sigma rules translated by the API's own translator. Each model's conditions are
 * met by some events, but like real detections the models fire on a few percent of them.
 */
import { MemoryStateStore } from '../src/detection/state/memory-state-store.js';
import { createDetectStage } from '../src/pipeline/detect.js';
import type { AccountContext } from '../src/event/account.js';
import type { EnrichedEvent } from '../src/event/types.js';
import { openSqliteStore } from '../src/storage/sqlite.js';
import { parseModelInput } from '../src/threat-models/input.js';
import { ThreatModelRegistry } from '../src/threat-models/registry.js';
import { createThreatModelStage } from '../src/threat-models/stage.js';
import { systemClock } from '../src/util/clock.js';
import { rng } from '../test/detection/benign-traffic.js';
import { accountContext, enriched, type EventSpec } from '../test/detection/helpers.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const EVENTS = arg('events', 200_000);
const WARMUP = Math.min(20_000, Math.floor(EVENTS / 5));

function stream(n: number): EnrichedEvent[] {
  const r = rng(7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const specs: EventSpec[] = [];
  for (let i = 0; i < n; i++) {
    const actor = `u${Math.floor(r() * 2000)}`;
    const ip = `198.51.${Math.floor(r() * 20)}.${Math.floor(r() * 250)}`;
    const at = i * 50;
    const kind = r();
    if (kind < 0.3) specs.push({ type: pick(['auth.login.success', 'auth.login.failure']), at, actor, ip });
    else if (kind < 0.5)
      specs.push({
        type: 'custom.export.report',
        at,
        actor,
        ip,
        metadata: { rows: Math.floor(r() * 5000), format: pick(['csv', 'pdf', 'xlsx']), dest: pick(['s3', 'email']) },
      });
    else if (kind < 0.7)
      specs.push({ type: 'custom.payment.create', at, actor, ip, metadata: { amount: Math.floor(r() * 900), card: `c${Math.floor(r() * 300)}` } });
    else
      specs.push({
        type: 'custom.api.call',
        at,
        actor,
        ip,
        request: { method: pick(['GET', 'POST']), path: pick(['/v1/users', '/admin/keys', '/v1/orders/42', '/internal/debug']), status: pick([200, 403, 404]) },
        metadata: { cmd: pick(['list users', 'powershell -enc SQBFAFgA', 'whoami /all', 'get orders']) },
      });
  }
  return specs.map((s) => enriched(s));
}

/** Ten model shapes; the n-th model is shape n % 10 with its own alert name and numbers. */
function modelBody(n: number): unknown {
  const alert = { alert: `custom.bench_${n}`, severity: 'medium' };
  switch (n % 10) {
    case 0:
      return {
        name: `export ${n}`,
        match: {
          event: 'custom.export.*',
          where: {
            all: [
              { field: 'metadata.rows', op: 'gt', value: 4000 + n },
              { field: 'metadata.format', op: 'in', value: ['csv', 'xlsx'] },
            ],
          },
        },
        outcome: alert,
      };
    case 1:
      return {
        name: `payments ${n}`,
        match: { event: 'custom.payment.*', where: { field: 'metadata.amount', op: 'gte', value: 500 } },
        threshold: { count: 5, group_by: 'actor_id', window_seconds: 600 },
        outcome: alert,
      };
    case 2:
      return {
        name: `card ${n}`,
        match: { event: 'custom.payment.create' },
        threshold: { count: 60, distinct: 'actor_id', group_by: 'metadata.card', window_seconds: 3600 },
        outcome: alert,
      };
    case 3:
      return {
        name: `admin ${n}`,
        match: {
          event: 'custom.api.*',
          where: {
            all: [
              {
                any: [
                  { field: 'request.path', op: 'startswith', value: '/admin' },
                  { field: 'request.path', op: 'wildcard', value: '/int*nal/*' },
                ],
              },
              { field: 'request.method', op: 'equals', value: 'post', ignore_case: true },
              { field: 'request.status', op: 'equals', value: 200 },
            ],
          },
        },
        outcome: alert,
      };
    case 4:
      return {
        name: `encoded ${n}`,
        match: {
          event: 'custom.api.call',
          where: {
            all: [
              { field: 'request.status', op: 'lt', value: 300 },
              { field: 'request.method', op: 'equals', value: 'POST' },
              { field: 'metadata.cmd', op: 'regex', value: '-e(nc|ncodedcommand) [A-Za-z0-9+/=]{4,}', flags: 'i' },
            ],
          },
        },
        outcome: alert,
      };
    case 5:
      return {
        name: `fail then export ${n}`,
        match: { event: 'auth.login.failure' },
        sequence: { then: [{ event: 'custom.export.*' }], group_by: 'actor_id', window_seconds: 30 },
        outcome: alert,
      };
    case 6:
      return {
        name: `recon ${n}`,
        match: { event: 'custom.api.call', where: { field: 'metadata.cmd', op: 'contains', value: 'whoami' } },
        sequence: { then: [{ event: 'custom.export.*' }], ordered: false, group_by: 'actor_id', window_seconds: 60 },
        outcome: alert,
      };
    case 7:
      return {
        name: `network ${n}`,
        match: {
          event: '*',
          where: { all: [{ field: 'ip', op: 'cidr', value: ['198.51.3.0/24', '10.0.0.0/8'] }, { not: { field: 'actor_id', op: 'exists', value: false } }] },
        },
        threshold: { count: 5, group_by: 'actor_id', window_seconds: 60 },
        outcome: alert,
      };
    case 8:
      return {
        format: 'sigma',
        rule: `title: Sigma web ${n}\ndetection:\n  selection:\n    cs-uri-stem|contains: debug\n    sc-status: 403\n    cs-method: POST\n  filter:\n    c-ip|cidr: 10.0.0.0/8\n  condition: selection and not filter\nlevel: high\n`,
      };
    default:
      return {
        format: 'sigma',
        rule: `title: Sigma count ${n}\ncorrelation:\n  type: event_count\n  rules: [fail_${n}]\n  group-by: [User]\n  timespan: 10m\n  condition:\n    gte: 8\n---\ntitle: f\nname: fail_${n}\ndetection:\n  s:\n    event.action: auth.login.failure\n  condition: s\n`,
      };
  }
}

async function run(models: number, events: readonly EnrichedEvent[]) {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  await store.migrate();
  const ctx = accountContext({}, `acc_bench${models}`);
  for (let n = 0; n < models; n++) {
    const parsed = parseModelInput(modelBody(n), {});
    if (!parsed.ok) throw new Error(`model ${n}: ${JSON.stringify(parsed.errors)}`);
    await store.threatModels.createThreatModel({
      id: `tm_${String(n).padStart(4, '0')}`,
      accountId: ctx.account.id,
      enabled: true,
      definition: parsed.value.definition as unknown as Record<string, unknown>,
      source: parsed.value.source as unknown as Record<string, unknown>,
      createdAt: 0,
    });
  }
  const state = new MemoryStateStore({ sweepIntervalMs: 0 });
  const registry = new ThreatModelRegistry(store.threatModels, state, { refreshMs: Number.POSITIVE_INFINITY });
  const builtIn = createDetectStage({ state });
  const threatModels = createThreatModelStage({ state, clock: systemClock, registry });
  // As the pipeline's lookUp, detect and model stages run them: the models' alerts after the detectors'.
  const detect = async (event: EnrichedEvent, ctx: AccountContext, eventId: string) => {
    const lookup = threatModels.lookup(ctx);
    const found = await builtIn(event, ctx, eventId);
    const inForce = lookup instanceof Promise ? await lookup : lookup;
    const more = inForce === undefined ? undefined : await threatModels.run(inForce, [event], [eventId], ctx);
    const extra = more?.[0]?.alerts ?? [];
    return extra.length === 0 ? found : { alerts: [...found.alerts, ...extra] };
  };
  let alerts = 0;
  let custom = 0;
  for (let i = 0; i < WARMUP; i++) await detect(events[i] as EnrichedEvent, ctx, `evt_w${i}`);
  const start = process.hrtime.bigint();
  for (let i = WARMUP; i < events.length; i++) {
    const d = await detect(events[i] as EnrichedEvent, ctx, `evt_${i}`);
    alerts += d.alerts.length;
    for (const a of d.alerts) if (a.type.startsWith('custom.')) custom++;
  }
  const ns = Number(process.hrtime.bigint() - start);
  const measured = events.length - WARMUP;
  await state.close();
  await store.close();
  return { models, usPerEvent: ns / 1000 / measured, eventsPerSecond: Math.round(measured / (ns / 1e9)), alerts, custom };
}

const events = stream(EVENTS);
console.log(`detect stage, in-memory state, ${EVENTS - WARMUP} events measured after ${WARMUP} warm-up events, one account`);
console.log('| enabled models | µs per event | events/s | alerts (custom) |');
console.log('| -------------: | -----------: | -------: | --------------: |');
for (const models of [0, 10, 100]) {
  const r = await run(models, events);
  console.log(`| ${r.models} | ${r.usPerEvent.toFixed(2)} | ${r.eventsPerSecond.toLocaleString('en-US')} | ${r.alerts} (${r.custom}) |`);
}
