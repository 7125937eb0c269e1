/**
 * What two JavaScript idioms cost on the Node that runs this script, in ns per operation (wall
 * time of a tight loop, median of ROUNDS): an object made by a leading spread and then given
 * members, against the same object with its members listed; and JSON.stringify of small objects
 * against writing their text. Node 20's V8 takes a slow path for the first; the service avoids it
 * on the per-event path (a lint rule keeps it out) and writes the stored document's head itself.
 * Run it on two Nodes to compare:
 *   npx tsx bench/node-slow-paths.ts
 *   "$(.ci/registry-node 24)/bin/node" --import tsx bench/node-slow-paths.ts
 */
import { jsonString } from '../src/util/json-text.js';

const N = Number(process.env.N ?? 500_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

interface Decision {
  readonly accepted: number;
  readonly dropped: number;
}
const decisionOf = (i: number): Decision => ({ accepted: 1, dropped: i & 1 });
const heads = Array.from({ length: 64 }, (_, i) => ({
  id: `evt_01M8CTTA5DRZY5GZ3D21479R${i}`,
  event: 'auth.login.success',
  timestamp: '2026-11-26T21:05:08.269Z',
  received_at: '2026-11-26T21:05:08.269Z',
  actor_id: `user-${i}`,
  email: `user-${i}@example.com`,
  ip: '90.14.173.8',
  user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  session_id: `s-${i}-3`,
}));
type Head = (typeof heads)[number];
const written = (h: Head): string =>
  `{"id":"${h.id}","event":${jsonString(h.event)},"timestamp":"${h.timestamp}","received_at":"${h.received_at}","actor_id":${jsonString(h.actor_id)}` +
  `,"email":${jsonString(h.email)},"ip":${jsonString(h.ip)},"user_agent":${jsonString(h.user_agent)},"session_id":${jsonString(h.session_id)}}`;
if (written(heads[3] as Head) !== JSON.stringify(heads[3])) throw new Error('the written head differs from JSON.stringify');

const cases: Record<string, (i: number) => unknown> = {
  'spread, then 1 member': (i) => ({ ...decisionOf(i), period: '2026-11' }),
  'spread, then 3 members': (i) => ({ ...decisionOf(i), period: '2026-11', usage: null, day: '2026-11-26' }),
  'members, then spread': (i) => ({ period: '2026-11', ...decisionOf(i) }),
  'members listed': (i) => {
    const d = decisionOf(i);
    return { accepted: d.accepted, dropped: d.dropped, period: '2026-11' };
  },
  'Object.assign({}, d, {member})': (i) => Object.assign({}, decisionOf(i), { period: '2026-11' }),
  'JSON.stringify, 4 members': (i) => JSON.stringify({ score: i, level: 'low', action: 'allow', breakdown: [] }),
  'the same text written': (i) => `{"score":${i},"level":"low","action":"allow","breakdown":[]}`,
  'JSON.stringify, 9-member head': (i) => JSON.stringify(heads[i & 63]),
  'the same head written': (i) => written(heads[i & 63] as Head),
  // Text written in pieces is copied into one piece when it is handed on (JSON.stringify's already is one).
  'written, then made one piece': (i) => written(heads[i & 63] as Head).indexOf('\u0001'),
};

console.log(`Node ${process.version}, ns per operation (median of ${ROUNDS} rounds of ${N})`);
let sink = 0;
for (const [name, run] of Object.entries(cases)) {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) if (run(i) !== undefined) sink++;
    rounds.push(Number(process.hrtime.bigint() - start) / N);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(32)} ${(rounds[Math.floor(ROUNDS / 2)] as number).toFixed(0).padStart(6)}`);
}
if (sink === 0) console.log('(nothing ran)');
