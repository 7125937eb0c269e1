/**
 * Start-up to ready (under 2 s with GeoIP and feeds loaded): spawns the built service
 * (`node dist/src/main.js`, run `npm run build` first) with the shipped DB-IP city and ASN data and
 * a feeds folder of realistic size (Tor exit list of 1,500 addresses, a FireHOL-style blocklist of
 * 50,000 addresses and networks, 300 hosting ASNs), and times spawn -> first GET /readyz 200.
 * Three cases, STARTUP_RUNS (default 5) runs each, median printed:
 *   first start  a fresh install: empty data folder (migrations run), the ASN cache `npm run build` prepared
 *   restart      the data folder of the previous run
 *   cold ASN     no ASN cache at all (ASN data outside node_modules, a fresh temp folder): the table is
 *                compiled from CSV, as when VIGIL_GEOIP_ASN names new data; informational, no target
 * Baseline measured in the same run: `node -e 0` (spawn to exit), printed as a ratio.
 *   npm run build && npx tsx bench/startup.ts
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, SERVICE_NODE_FLAGS } from './lib.js';

const RUNS = Number(process.env.STARTUP_RUNS ?? 5);
const MAIN = 'dist/src/main.js';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A deterministic pseudo-random generator (mulberry32), so every run builds the same feeds. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writeFeeds(dir: string): void {
  const r = rng(7);
  const octet = () => Math.floor(r() * 256);
  const publicIp = () => `${1 + Math.floor(r() * 222)}.${octet()}.${octet()}.${octet()}`;
  mkdirSync(dir, { recursive: true });
  // The Tor Project's bulk exit list: one address a line.
  const tor = new Set<string>();
  while (tor.size < 1500) tor.add(publicIp());
  writeFileSync(join(dir, 'tor-exit-nodes.txt'), [...tor].join('\n') + '\n');
  // FireHOL level-1 style: a comment header, then addresses and networks.
  const lines = ['#', '# firehol_level1 (synthetic, for bench/startup.ts)', '#'];
  for (let i = 0; i < 50_000; i++) {
    if (i % 10 === 0) lines.push(`${1 + Math.floor(r() * 222)}.${octet()}.${octet()}.0/${20 + Math.floor(r() * 5)}`);
    else lines.push(publicIp());
  }
  writeFileSync(join(dir, 'blocklist-firehol.netset'), lines.join('\n') + '\n');
  const asns = Array.from({ length: 300 }, (_, i) => `AS${10_000 + i * 97} hosting-${i}`);
  writeFileSync(join(dir, 'hosting-asns.txt'), asns.join('\n') + '\n');
}

interface Start {
  readonly ms: number;
  /** The service's `vigil ready` log line (its start-up log: enrichment parts and their open times, startupMs). */
  readonly ready: Record<string, unknown>;
}

async function startOnce(env: Record<string, string>): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAIN], {
    env: { ...process.env, ...env, VIGIL_PORT: String(port), VIGIL_HOST: '127.0.0.1', VIGIL_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // The enrichment data in use is in the start-up log, not in the unauthenticated /readyz.
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const readyLine = (): Record<string, unknown> => {
    const line = stdout.split('\n').find((l) => l.includes('"msg":"vigil ready"'));
    return line === undefined ? {} : (JSON.parse(line) as Record<string, unknown>);
  };
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`service exited before ready:\n${stderr}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.status === 200) {
          const ms = performance.now() - started;
          // The line is written right after the listener opens: give it a moment to arrive.
          for (let wait = 0; wait < 100 && !stdout.includes('"msg":"vigil ready"'); wait++) await sleep(10);
          return { ms, ready: readyLine() };
        }
      } catch {
        /* not listening yet */
      }
      await sleep(5);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (exited ? r(undefined) : child.once('exit', r)));
  }
}

function nodeBaseline(): number {
  const started = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - started;
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const root = mkdtempSync(join(tmpdir(), 'vigil-startup-'));
  const feeds = join(root, 'feeds');
  writeFeeds(feeds);
  const first: number[] = [];
  const restart: number[] = [];
  const cold: number[] = [];
  // A copy of the shipped ASN folder outside node_modules: its cache goes to the temp folder.
  const asnCopy = join(root, 'asn');
  cpSync(dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json')), asnCopy, { recursive: true });
  const baseline: number[] = [];
  let ready: Record<string, unknown> = {};
  for (let run = 0; run < RUNS; run++) {
    baseline.push(nodeBaseline());
    const env = { VIGIL_DATA_DIR: join(root, `data-${run}`), VIGIL_FEEDS_DIR: feeds };
    first.push((await startOnce(env)).ms);
    const again = await startOnce(env);
    restart.push(again.ms);
    ready = again.ready;
    const tmp = join(root, `tmp-${run}`);
    mkdirSync(tmp);
    cold.push((await startOnce({ VIGIL_DATA_DIR: join(root, `cold-${run}`), VIGIL_FEEDS_DIR: feeds, VIGIL_GEOIP_ASN: asnCopy, TMPDIR: tmp })).ms);
  }
  const enrichment = (ready.enrichment ?? {}) as Record<string, { openMs?: number; enabled?: boolean; ranges?: number }>;
  console.log(`node ${process.version}, ${RUNS} runs; feeds: 1,500 Tor exits, 50,000 blocklist entries, 300 hosting ASNs`);
  console.log(
    `the service's own start-up time (last restart): ${String(ready.startupMs)} ms; enrichment parts open (ms): ${JSON.stringify(
      Object.fromEntries(
        Object.entries(enrichment)
          .filter(([, v]) => typeof v === 'object' && v !== null)
          .map(([k, v]) => [k, v.openMs ?? v.enabled]),
      ),
    )}`,
  );
  const b = median(baseline);
  const line = (name: string, xs: number[]) =>
    console.log(
      `${name.padEnd(12)} median ${median(xs).toFixed(0)} ms (runs ${xs.map((x) => x.toFixed(0)).join(', ')}), ${(median(xs) / b).toFixed(1)}x node -e 0 ${median(xs) < 2000 ? 'PASS' : 'FAIL'} (< 2000 ms)`,
    );
  console.log(`node -e 0    median ${b.toFixed(0)} ms`);
  line('first start', first);
  line('restart', restart);
  console.log(`cold ASN     median ${median(cold).toFixed(0)} ms (runs ${cold.map((x) => x.toFixed(0)).join(', ')}): compiling new ASN data, no target`);
  rmSync(root, { recursive: true, force: true });
  process.exit(median(first) < 2000 && median(restart) < 2000 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
