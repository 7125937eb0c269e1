/**
 * Memory plateau: "after 5 million events from 200,000 actors, resident memory levels
 * off (less than 10% growth over the last million) and stays under 1 GiB".
 * Starts the built service (`node dist/src/main.js`, embedded mode: SQLite, in-memory limiter and
 * detection state; `npm run bench:memory` builds first) and sends EVENTS events of the
 * bench/workload.ts mix from ACTORS actors through POST /v1/events/batch, BATCH events a request,
 * CONNECTIONS requests in flight. Limits are out of the way (bench plan, VIGIL_IP_LIMITS).
 * Samples RSS (/proc) and the V8 heap in use (/metrics) every SAMPLE_EVERY events and RSS once a
 * second for the maximum; prints the growth over the last million events and PASS/FAIL.
 *   EVENTS (default 5,000,000)  ACTORS (200,000)  BATCH (100)  CONNECTIONS (4)  SAMPLE_EVERY (250,000)
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_PLANS, freePort, keyFor, rssOf, startNode, vigilEnv } from './lib.js';
import { benchEvent } from './workload.js';

const EVENTS = Number(process.env.EVENTS ?? 5_000_000);
const ACTORS = Number(process.env.ACTORS ?? 200_000);
const BATCH = Number(process.env.BATCH ?? 100);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 4);
const SAMPLE_EVERY = Number(process.env.SAMPLE_EVERY ?? 250_000);
const LAST = Math.min(1_000_000, EVENTS / 5);
const GIB = 1024 ** 3;
const MB = 1024 * 1024;
const MAIN = 'dist/src/main.js';

interface Sample {
  readonly events: number;
  readonly seconds: number;
  readonly rss: number;
  readonly heapUsed: number;
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const dir = mkdtempSync(join(tmpdir(), 'vigil-memory-'));
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, BENCH_PLANS);
  const port = await freePort();
  const { child } = await startNode([MAIN], vigilEnv(port, plans, { VIGIL_DATA_DIR: join(dir, 'data') }), port, { path: '/readyz' });
  process.on('exit', () => child.kill('SIGKILL'));
  const pid = child.pid as number;
  const base = `http://127.0.0.1:${port}`;
  const key = await keyFor(port, 'bench');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const heapUsed = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^vigil_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? NaN);
  };
  const started = performance.now();
  const samples: Sample[] = [{ events: 0, seconds: 0, rss: await rssOf(pid), heapUsed: await heapUsed() }];
  let maxRss = samples[0]!.rss;
  const poller = setInterval(
    () =>
      void rssOf(pid).then(
        (rss) => (maxRss = Math.max(maxRss, rss)),
        () => undefined,
      ),
    1000,
  );

  let next = 0; // next event index to send
  let accepted = 0;
  let failures = 0;
  let nextSample = SAMPLE_EVERY;
  let sampling: Promise<void> = Promise.resolve();
  const line = (s: Sample) =>
    console.log(
      `${s.events.toLocaleString().padStart(10)} events  t=${s.seconds.toFixed(0)}s  rss ${(s.rss / MB).toFixed(0)} MB  heapUsed ${(s.heapUsed / MB).toFixed(0)} MB  (${Math.round(s.events / Math.max(1, s.seconds)).toLocaleString()} events/s)`,
    );

  async function connection(): Promise<void> {
    while (next < EVENTS) {
      const from = next;
      const n = Math.min(BATCH, EVENTS - from);
      next += n;
      const events = Array.from({ length: n }, (_, k) => benchEvent(from + k, ACTORS));
      const res = await fetch(`${base}/v1/events/batch`, { method: 'POST', headers, body: JSON.stringify({ events }) });
      const body = (await res.json()) as { accepted?: number };
      if (res.status !== 202 || body.accepted !== n) {
        if (failures++ < 5) console.log(`batch at ${from}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      } else accepted += n;
      if (accepted >= nextSample) {
        nextSample += SAMPLE_EVERY;
        const at = accepted;
        sampling = sampling.then(async () => {
          const s = { events: at, seconds: (performance.now() - started) / 1000, rss: await rssOf(pid), heapUsed: await heapUsed() };
          samples.push(s);
          maxRss = Math.max(maxRss, s.rss);
          line(s);
        });
      }
    }
  }
  console.log(
    `memory plateau: ${EVENTS.toLocaleString()} events from ${ACTORS.toLocaleString()} actors, batches of ${BATCH}, ${CONNECTIONS} connections, node ${process.version}`,
  );
  line(samples[0]!);
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  await sampling;
  clearInterval(poller);
  const last = samples.at(-1)!;
  // The sample nearest to LAST events before the end.
  const before = samples.reduce((best, s) => (Math.abs(last.events - LAST - s.events) < Math.abs(last.events - LAST - best.events) ? s : best), samples[0]!);
  const growth = (last.rss - before.rss) / before.rss;
  const heapGrowth = (last.heapUsed - before.heapUsed) / before.heapUsed;
  child.kill('SIGTERM');
  const exitCode = await new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `\naccepted ${accepted.toLocaleString()} of ${EVENTS.toLocaleString()} (${failures} failed batches) in ${last.seconds.toFixed(0)} s; shutdown exit code ${exitCode}`,
  );
  console.log(
    `RSS over the last ${(last.events - before.events).toLocaleString()} events: ${(before.rss / MB).toFixed(0)} -> ${(last.rss / MB).toFixed(0)} MB (${(growth * 100).toFixed(1)}%, limit 10%); heapUsed ${(before.heapUsed / MB).toFixed(0)} -> ${(last.heapUsed / MB).toFixed(0)} MB (${(heapGrowth * 100).toFixed(1)}%)`,
  );
  console.log(`max RSS ${(maxRss / MB).toFixed(0)} MB (limit 1024 MB)`);
  const pass = failures === 0 && growth < 0.1 && maxRss < GIB;
  console.log(pass ? 'PASS' : 'FAIL');
  process.exit(pass ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
