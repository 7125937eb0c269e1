/**
 * The soak's detection state over simulated hours: the soak's event mix (bench/workload.ts,
 * 20,000 actors) at the soak's rate through validate, classify, enrich and detect in process,
 * on a manual clock, so an hour of the soak takes about a minute. Every SIM_SAMPLE_MINUTES it
 * prints the state records held and the V8 heap in use after a full collection. Shows whether the
 * growth a 10-minute soak sees is detection windows still filling (it levels off once the
 * longest window, 60 min, has passed) or something unbounded.
 *   npx tsx bench/soak-state.ts        SIM_MINUTES (default 120)  SIM_RATE events/s (default 360)  SIM_ACTORS (default 20,000)
 *   SIM_SNAPSHOT_MINUTES=60,120        also write heap snapshots at those minutes (compare with bench/heap-diff.ts)
 */
import { fullScopes } from '../src/event/account.js';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../src/config/config.js';
import { MemoryStateStore } from '../src/detection/state/memory-state-store.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { createDetectStage } from '../src/pipeline/detect.js';
import type { ValidatedEvent } from '../src/event/types.js';
import { validateEvent } from '../src/pipeline/validate.js';
import { createServices } from '../src/services.js';
import { ManualClock } from '../src/util/clock.js';
import { newId } from '../src/util/ids.js';
import { benchEvent } from './workload.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MINUTES = Number(process.env.SIM_MINUTES ?? 120);
const RATE = Number(process.env.SIM_RATE ?? 360);
const ACTORS = Number(process.env.SIM_ACTORS ?? 20_000);
const SAMPLE_MINUTES = Number(process.env.SIM_SAMPLE_MINUTES ?? 10);
const SNAPSHOT_MINUTES = new Set((process.env.SIM_SNAPSHOT_MINUTES ?? '').split(',').filter(Boolean).map(Number));
const SWEEP_EVERY_MS = 5_000; // the store's background sweep period

const clock = new ManualClock(Date.now());
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: ':memory:', VIGIL_LOG_LEVEL: 'silent' }), { clock });
const account = await services.store.accounts.createAccount({ id: 'acc_soak', name: 'soak', plan: 'business', createdAt: clock.now() });
const ctx = {
  account,
  plan: services.config.plans.business!,
  keyId: 'key_soak',
  keyKind: 'secret' as const,
  principal: { kind: 'key' as const, keyId: 'key_soak', keyPrefix: 'vgl_sk_bench', scopes: fullScopes('secret') },
};
const classify = createClassifyStage(services.catalog);
const state = new MemoryStateStore({ clock, sweepIntervalMs: 0 });
const detect = createDetectStage({ state, clock });

const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};
const base = heapMb();
console.log(
  `simulating ${MINUTES} min of the soak at ${RATE} events/s (${(MINUTES * 60 * RATE).toLocaleString()} events), heap at start ${base.toFixed(1)} MB`,
);
const stepMs = 1000 / RATE;
let seq = 0;
let nextSweep = SWEEP_EVERY_MS;
for (let minute = 1; minute <= MINUTES; minute++) {
  for (let k = 0; k < 60 * RATE; k++) {
    clock.advance(stepMs);
    const v = validateEvent(benchEvent(seq, ACTORS), { receivedAt: clock.now() });
    if (!v.ok) throw new Error(JSON.stringify(v.errors));
    await detect(services.enrichment.enrich(classify(v.event as ValidatedEvent)), ctx, newId('evt'));
    seq++;
    if (seq * stepMs >= nextSweep) {
      state.sweep(200_000);
      nextSweep += SWEEP_EVERY_MS;
    }
  }
  if (SNAPSHOT_MINUTES.has(minute)) console.log(`t=${minute} min: heap snapshot ${writeHeapSnapshot()}`);
  if (minute % SAMPLE_MINUTES === 0)
    console.log(`t=${minute} min: ${seq.toLocaleString()} events, ${state.size.toLocaleString()} state records, heap +${(heapMb() - base).toFixed(1)} MB`);
}
await state.close();
await services.shutdown();
