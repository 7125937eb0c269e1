/**
 * Footprint of the built agent (node dist/): idle CPU and resident memory with every source
 * this host supports, then the drain of a 10,000-line burst. Needs `npm run build` in agent/.
 * Prints a table; the figures depend on the machine.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { provision, startService, tempDir } from '../../test/process/service.js';
import { failureLine, listEvents, sleep, until } from '../test/harness.js';

const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 60);
const BURST = Number(process.env.BURST ?? 10_000);
const TICKS = 100; // USER_HZ on Linux

function sample(pid: number): { cpuTicks: number; rssKb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuTicks: Number(f[11]) + Number(f[12]), rssKb: Number(rss?.[1] ?? 0) };
}

const dir = tempDir('vigil-agent-bench-');
const service = await startService(dir);
const { key } = await provision(service.base, 'pro');
const log = join(dir, 'auth.log');
writeFileSync(log, '');
const config = join(dir, 'agent.yaml');
writeFileSync(
  config,
  stringify({
    server: service.base,
    key,
    host: 'bench-host',
    buffer: { path: join(dir, 'buffer.db') },
    sources: { auth: { enabled: true, paths: [log] }, journal: { enabled: false } },
  }),
);
// The memory settings the systemd unit ships with, so the figures are those of an installed agent.
const unit = readFileSync(new URL('../deploy/vigil-agent.service', import.meta.url), 'utf8');
const nodeOptions = /^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(unit)?.[1] ?? '';
const agent = spawn(process.execPath, [new URL('../bin/vigil-agent.mjs', import.meta.url).pathname, 'run', '--config', config], {
  stdio: ['ignore', 'ignore', 'pipe'],
  env: { ...process.env, NODE_OPTIONS: nodeOptions },
});
let stderr = '';
agent.stderr?.on('data', (d) => (stderr += d));
await until('the agent', 15_000, async () => (stderr.includes('vigil-agent running') ? true : undefined));
const sources = (JSON.parse(stderr.split('\n').find((l) => l.includes('vigil-agent running')) as string) as { sources: string[] }).sources;
await sleep(10_000); // first looks (file hashes, baselines) done

const pid = agent.pid as number;
const start = sample(pid);
let peakIdle = start.rssKb;
for (let s = 0; s < IDLE_SECONDS; s++) {
  await sleep(1000);
  peakIdle = Math.max(peakIdle, sample(pid).rssKb);
}
const idle = sample(pid);
const idleCpu = (idle.cpuTicks - start.cpuTicks) / TICKS / IDLE_SECONDS;

const before = (await listEvents(service.base, key)).length;
const t0 = Date.now();
let text = '';
for (let i = 0; i < BURST; i++) text += failureLine(i) + '\n';
appendFileSync(log, text);
let peakBurst = 0;
await until(
  'the burst to be stored',
  300_000,
  async () => {
    peakBurst = Math.max(peakBurst, sample(pid).rssKb);
    return (await listEvents(service.base, key)).length - before >= BURST ? true : undefined;
  },
  500,
);
const drainMs = Date.now() - t0;
const after = sample(pid);

agent.kill('SIGTERM');
service.child.kill('SIGTERM');
await service.exited;

const rows: [string, string][] = [
  ['NODE_OPTIONS (from the systemd unit)', nodeOptions],
  ['sources running', sources.join(', ')],
  [`idle CPU over ${IDLE_SECONDS} s`, `${(idleCpu * 100).toFixed(2)} % of one core`],
  ['idle RSS (end / peak)', `${(idle.rssKb / 1024).toFixed(1)} MB / ${(peakIdle / 1024).toFixed(1)} MB`],
  [`burst of ${BURST} lines: stored after`, `${(drainMs / 1000).toFixed(1)} s (${Math.round(BURST / (drainMs / 1000))} events/s)`],
  ['RSS during the burst (peak / after)', `${(peakBurst / 1024).toFixed(1)} MB / ${(after.rssKb / 1024).toFixed(1)} MB`],
];
for (const [k, v] of rows) console.log(`${k.padEnd(40)} ${v}`);
