/**
 * Detect-stage benchmark: a mixed attack-and-benign stream through createDetectStage
 * with the in-memory state store, on one core, then the memory held for a million actors and
 * how it shrinks when they go idle.
 *
 *   npx tsx bench/detect.ts [--events 600000] [--actors 1000000]
 *
 * Memory is heap used after forced GCs (the script enables gc itself), before and after the
 * actors' logins, then after the wall clock moves past the session and profile lifetimes and a
 * sweep: the store must give the memory back without traffic to those records.
 *
 * Benign traffic: the synthetic users of test/detection/benign-traffic.ts (logins with typos,
 * sessions of data access, exports, API calls). Attacks: every firing scenario of
 * test/fixtures/detectors, replayed many times with fresh actors, IPs and hosts, spread over the days.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryStateStore } from '../src/detection/state/memory-state-store.js';
import { createDetectStage } from '../src/pipeline/detect.js';
import type { EnrichedEvent } from '../src/event/types.js';
import { ManualClock } from '../src/util/clock.js';
import { newId } from '../src/util/ids.js';
import { benignDay, benignUsers, rng } from '../test/detection/benign-traffic.js';
import { expand, loadScenarios } from '../test/detection/fixtures.js';
import { accountContext, enriched, type EventSpec } from '../test/detection/helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TARGET_EVENTS = arg('events', 600_000);
const ACTORS = arg('actors', 1_000_000);
const DAY = 86_400_000;
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** An attack scenario replayed as round `k`: its own actors, IPs, hosts and sessions, at `offset`. */
function attackRound(events: readonly (EventSpec & { at: number })[], k: number, offset: number): EventSpec[] {
  const tag = (s: string | undefined) => (s === undefined ? undefined : `${s}~${k}`);
  const moveIp = (ip: string | undefined) => (ip === undefined ? undefined : ip.replace(/^(\d+)\.(\d+)\.\d+\./, (_, a, b) => `${a}.${b}.${k % 250}.`));
  return events.map((e) => ({ ...e, at: e.at + offset, actor: tag(e.actor), host: tag(e.host), session: tag(e.session), ip: moveIp(e.ip) }) as EventSpec);
}

function buildStream(): { events: EnrichedEvent[]; attackEvents: number } {
  const users = benignUsers(5000);
  const specs: EventSpec[] = [];
  let day = 0;
  while (specs.length < TARGET_EVENTS * 0.85) specs.push(...benignDay(users, day * DAY, 1000 + day, day++ < 3 ? 'history' : 'full'));
  const benign = specs.length;
  const attacks = loadScenarios()
    .filter((s) => s.scenario.expect.alerts.length > 0 && s.scenario.settings === undefined)
    .map((s) => expand(s.scenario));
  const r = rng(99);
  for (let k = 0; specs.length < benign / 0.85; k++) {
    for (const events of attacks) specs.push(...attackRound(events, k, Math.floor(r() * day * DAY)));
  }
  specs.sort((a, b) => (a.at as number) - (b.at as number));
  return { events: specs.map((s) => enriched(s)), attackEvents: specs.length - benign };
}

async function throughput(events: readonly EnrichedEvent[]): Promise<{ seconds: number; cpuSeconds: number; alerts: number; opened: number }> {
  const state = new MemoryStateStore({ sweepIntervalMs: 0 });
  const detect = createDetectStage({ state });
  const ctx = accountContext();
  const ids = events.map((_, i) => `evt_${i}`);
  let alerts = 0;
  let opened = 0;
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < events.length; i++) {
    const d = await detect(events[i] as EnrichedEvent, ctx, ids[i]);
    alerts += d.alerts.length;
    for (const a of d.alerts) if (a.opened) opened++;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  await state.close();
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, alerts, opened };
}

async function memory(): Promise<void> {
  const clock = new ManualClock();
  const state = new MemoryStateStore({ clock, sweepIntervalMs: 0, sweepPerRun: 8 });
  const detect = createDetectStage({ state, clock });
  // A real account id (30 characters) rather than the tests' short one: every state key starts with it.
  const ctx = accountContext({}, newId('acc'));
  const families = ['Chrome/Windows', 'Safari/macOS', 'Firefox/Linux', 'Mobile Safari/iOS'];
  const countries = ['FR', 'DE', 'US', 'GB', 'ES'];
  const base = heapAfterGc();
  const t0 = Date.UTC(2026, 2, 2, 8);
  for (let i = 0; i < ACTORS; i++) {
    const e = enriched({
      type: 'auth.login.success',
      actor: `user-${i}`,
      ip: `81.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      session: `sess-${i}`,
      ua: families[i % families.length],
      geo: { country: countries[i % countries.length], lat: 48 + (i % 100) / 100, lon: 2 + (i % 37) / 10, radius: 20 },
    });
    await detect({ ...e, occurredAt: t0 + i * 10 }, ctx, `evt_${i}`);
    if (i % 100_000 === 0) clock.advance(1000);
  }
  const full = heapAfterGc() - base;
  const records = state.size;
  console.log(
    `memory: ${ACTORS.toLocaleString()} actors, one login each -> ${records.toLocaleString()} records, heap +${mb(full)} (${Math.round(full / ACTORS)} B/actor)`,
  );
  clock.advance(25 * 3_600_000);
  state.sweep(Number.MAX_SAFE_INTEGER);
  const afterDay = heapAfterGc() - base;
  console.log(`memory: idle 25 h (sessions expired) -> ${state.size.toLocaleString()} records, heap +${mb(afterDay)}`);
  clock.advance(91 * DAY);
  state.sweep(Number.MAX_SAFE_INTEGER);
  const afterIdle = heapAfterGc() - base;
  console.log(`memory: idle 91 days (profiles expired) -> ${state.size.toLocaleString()} records, heap +${mb(afterIdle)}`);
  await state.close();
}

async function main(): Promise<void> {
  console.log(
    `node ${process.version}, one core (single event loop, events awaited one by one), load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)}`,
  );
  const { events, attackEvents } = buildStream();
  console.log(
    `stream: ${events.length.toLocaleString()} events (${attackEvents.toLocaleString()} from attack scenarios, ${((attackEvents / events.length) * 100).toFixed(1)}%)`,
  );
  await throughput(events.slice(0, 100_000)); // warm-up: JIT
  for (let run = 1; run <= 3; run++) {
    const { seconds, cpuSeconds, alerts, opened } = await throughput(events);
    console.log(
      `run ${run}: ${Math.round(events.length / seconds).toLocaleString()} events/s wall, ${Math.round(events.length / cpuSeconds).toLocaleString()} events per CPU-second ` +
        `(${((cpuSeconds / events.length) * 1e6).toFixed(2)} µs CPU/event; the two differ when the machine is shared), ${alerts.toLocaleString()} alert hits (${opened.toLocaleString()} opened)`,
    );
  }
  await memory();
}

await main();
