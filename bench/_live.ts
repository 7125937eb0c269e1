import { loadConfig } from '../src/config/config.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { validateEvent } from '../src/pipeline/validate.js';
import type { ValidatedEvent } from '../src/pipeline/types.js';
import { createServices } from '../src/services.js';
import { newId } from '../src/util/ids.js';
import { benchEvent } from './workload.js';
const N = Number(process.argv[2] ?? 1_000_000);
const ACTORS = Number(process.argv[3] ?? 200_000);
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: ':memory:' }));
const account = await services.store.createAccount({ id: 'acc_bench_0123456789abcdefghijkl', name: 'bench', plan: 'business', createdAt: Date.now() });
const ctx = { account, plan: services.config.plans.business!, keyId: 'key_bench', keyKind: 'secret' as const };
const classify = createClassifyStage(services.catalog);
const gc = (globalThis as { gc?: () => void }).gc!;
gc(); const base = process.memoryUsage().heapUsed;
const now = Date.now();
for (let i = 0; i < N; i++) {
  const v = validateEvent(benchEvent(i, ACTORS), { receivedAt: now + i * 2 });
  if (!v.ok) throw new Error('invalid');
  const e = services.enrich(classify(v.event as ValidatedEvent));
  await services.detect(e, ctx, newId('evt', now + i * 2));
  if ((i + 1) % 250_000 === 0) { gc(); console.log(`${i + 1} events: live heap +${((process.memoryUsage().heapUsed - base) / 1e6).toFixed(0)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`); }
}
await services.shutdown();
