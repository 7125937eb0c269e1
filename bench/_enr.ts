import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { validateEvent } from '../src/pipeline/validate.js';
import { createServices } from '../src/services.js';
import { benchEvent } from './workload.js';
const dir = mkdtempSync(join(tmpdir(), 'vigil-enr-'));
const services = await createServices(loadConfig({ VIGIL_DATA_DIR: dir }));
const classify = createClassifyStage(services.catalog);
const now = Date.now();
const M = 5000;
const bodies = Array.from({ length: M }, (_, i) => JSON.stringify(i % 2 === 0 ? { ...benchEvent(i), event_id: `evt-${i}` } : benchEvent(i)));
const N = 200_000;
for (let r = 0; r < 3; r++) {
  let v = 0, c = 0, e = 0;
  for (let i = 0; i < N; i++) {
    const body = JSON.parse(bodies[i % M]!);
    let t = process.hrtime.bigint();
    const val = validateEvent(body, { receivedAt: now });
    if (!val.ok) throw new Error('bad');
    let t2 = process.hrtime.bigint(); v += Number(t2 - t); t = t2;
    const cl = classify(val.event);
    t2 = process.hrtime.bigint(); c += Number(t2 - t); t = t2;
    services.enrichment.enrich(cl);
    t2 = process.hrtime.bigint(); e += Number(t2 - t);
  }
  console.log('validate', (v / N / 1000).toFixed(2), 'classify', (c / N / 1000).toFixed(2), 'enrich', (e / N / 1000).toFixed(2), 'µs');
}
await services.shutdown();
