/**
 * Bytes allocated per event on the request thread, by allocating function, through the whole
 * HTTP lifecycle in process (Fastify inject, the built service, a SQLite file and its writer thread): V8's sampling
 * heap profiler over CONCURRENCY requests in flight at a time. SURVIVORS=1 counts only what
 * survived at least one young-generation collection: what the old generation and its major
 * collections pay for. Byte counts repeat from run to run, unlike CPU times on a shared host.
 *   npm run build && npx tsx bench/allocations.ts
 *   KIND=single|batch (batch)  REQUESTS per in-flight slot (batch 40, single 3,000)  CONCURRENCY (16)  TOP (40)  SURVIVORS=1
 */
import { Session } from 'node:inspector/promises';
import { bodies, inProcessEnv } from './lib.js';

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const kind = process.env.KIND === 'single' ? 'single' : 'batch';
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const requests = Number(process.env.REQUESTS ?? (kind === 'batch' ? 40 : 3000));
const survivorsOnly = process.env.SURVIVORS === '1';
// The built service: what `npm start` runs, compiled as it ships.
const dist = new URL('../dist/src/', import.meta.url);
const { loadConfig } = (await import(new URL('config/config.js', dist).href)) as typeof import('../src/config/config.js');
const { createServices } = (await import(new URL('services.js', dist).href)) as typeof import('../src/services.js');
const { buildApp } = (await import(new URL('app.js', dist).href)) as typeof import('../src/app.js');

const { env } = inProcessEnv('allocations', { VIGIL_IP_LIMITS: '127.0.0.1/32=1000000000' });
const config = loadConfig(env);
const services = await createServices(config);
const vigil = await buildApp(services);
const account = await vigil.accounts.create('bench', 'bench');
if (!account.ok) throw new Error(account.message);
const created = await vigil.accounts.createKey(account.value.id, 'secret');
if (!created.ok) throw new Error(created.message);
const headers = { authorization: `Bearer ${created.value.key}`, 'content-type': 'application/json' };
const payloads = kind === 'batch' ? bodies(200, 100) : bodies(5000, 1);
const url = kind === 'batch' ? '/v1/events/batch' : '/v1/events';
let next = 0;
async function send(count: number): Promise<void> {
  for (let k = 0; k < count; k++) {
    const res = await vigil.app.inject({ method: 'POST', url, headers, payload: payloads[next++ % payloads.length] });
    if (res.statusCode !== 202) throw new Error(`${res.statusCode} ${res.body}`);
  }
}
const inFlight = (count: number) => Promise.all(Array.from({ length: concurrency }, () => send(count)));

// Unmeasured warm-up: the optimising compiler's first minutes allocate differently.
await inFlight(Math.ceil(requests / 4));
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: !survivorsOnly,
});
await inFlight(requests);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
const events = requests * concurrency * (kind === 'batch' ? 100 : 1);

// Built-ins (no script) are named with their caller, which says more than `push` or `next`.
const bytesBy = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode, caller: string) => {
  const f = node.callFrame;
  const at = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}`;
  const name = f.url === '' ? `${f.functionName} in ${caller}` : at;
  if (node.selfSize > 0) {
    bytesBy.set(name, (bytesBy.get(name) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const child of node.children) walk(child, f.url === '' ? caller : at);
};
walk(profile.head, '(root)');
console.log(
  `${kind}, ${concurrency} requests in flight: ${(total / events).toFixed(0)} bytes per event ${survivorsOnly ? 'survived a young-generation collection' : 'allocated'}`,
);
for (const [name, bytes] of [...bytesBy].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 40)))
  console.log(`${(bytes / events).toFixed(0).padStart(7)} B  ${name}`);
await vigil.close();
await services.shutdown();
