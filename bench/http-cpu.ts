/**
 * Server CPU per event over HTTP (all threads of the Vigil process, user + system), single events
 * then batches of 100, SECS seconds each (default 6): a figure a loaded machine disturbs far less
 * than rates. For before/after comparisons run two checkouts alternately (A B A B) and take medians.
 *   npx tsx bench/http-cpu.ts
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_PLANS, bodies, drive, freePort, keyFor, start, vigilEnv } from './lib.js';
const dir = mkdtempSync(join(tmpdir(), 'vigil-httpcpu-'));
const plansFile = join(dir, 'plans.json');
writeFileSync(plansFile, BENCH_PLANS);
const port = await freePort();
const vigil = await start(['src/main.ts'], vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dir }), port);
const auth = { authorization: `Bearer ${await keyFor(port, 'bench')}` };
const secs = Number(process.env.SECS ?? 6);
const s = await drive('vigil', 'single', [vigil], '/v1/events', bodies(5000, 1), 1, auth, undefined, secs);
const b = await drive('vigil', 'batch100', [vigil], '/v1/events/batch', bodies(200, 100), 100, auth, undefined, secs);
console.log(JSON.stringify({ singleCpuUs: s.cpuUsPerEvent, singleRps: s.reqPerSec, batchCpuUs: b.cpuUsPerEvent, batchEps: b.eventsPerSec }));
vigil.child.kill('SIGTERM');
process.exit(0);
