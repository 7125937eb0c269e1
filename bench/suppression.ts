/**
 * What the suppression list costs per event on the request thread: one keyed hash
 * (`pseudonymOf`, HMAC-SHA256) per identifier the event carries, looked up in an account's list
 * held in memory. Prints µs per `pseudonymOf`, per bare `createHmac`, and per event carrying an
 * actor id, email, address and device id against a list of `SUPPRESSIONS` (10,000) identifiers,
 * none of them suppressed (every identifier hashed), in three rounds.
 *   npx tsx bench/suppression.ts
 */
import { createHmac } from 'node:crypto';
import type { ValidatedEvent } from '../src/event/types.js';
import { accountSecret, PseudonymKeys, pseudonymOf } from '../src/privacy/pseudonym.js';
import { Suppressions, suppressionEntries } from '../src/privacy/suppression.js';

const MASTER = 'bench-master-secret-0123456789-abcdefgh';
const SIZE = Number(process.env.SUPPRESSIONS ?? 10_000);
const N = 200_000;

const keys = new PseudonymKeys(MASTER);
const listed = suppressionEntries(
  keys,
  'acc_bench',
  Array.from({ length: SIZE }, (_, i) => ({ kind: 'actor_id' as const, value: `user-${i}` })),
) as { hash: string }[];
const suppressions = new Suppressions(new Map(listed.map((e) => [e.hash, Number.MAX_SAFE_INTEGER])), keys.forAccount('acc_bench'));
const events = Array.from(
  { length: 1000 },
  (_, i) => ({ actorId: `other-${i}`, email: `o${i}@example.com`, ip: `203.0.113.${i % 250}`, metadata: { device_id: `d-${i}` } }) as unknown as ValidatedEvent,
);
const secret = accountSecret(MASTER, 'acc_bench');
const rawKey = Buffer.alloc(32, 7);

const microsPer = (fn: (i: number) => unknown): number => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / 1e3 / N;
};

for (let round = 1; round <= 3; round++) {
  const hmac = microsPer((i) => createHmac('sha256', rawKey).update(`actor_id\0user-${i}`).digest());
  const pseudonym = microsPer((i) => pseudonymOf(secret, 'actor_id', `user-${i}`));
  let hits = 0;
  const event = microsPer((i) => suppressions.suppresses(events[i % 1000] as ValidatedEvent, 1) && hits++);
  console.log(
    `round ${round}: createHmac ${hmac.toFixed(2)} µs, pseudonymOf ${pseudonym.toFixed(2)} µs, event with 4 identifiers vs ${SIZE} listed ${event.toFixed(2)} µs (${hits} suppressed)`,
  );
}
