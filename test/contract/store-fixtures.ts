import type { AlertRow, CommitBatch, EventFilter, EventRow, IdempotencyRow, UsageDelta } from '../../src/storage/types.js';
import type { Store } from '../../src/storage/store.js';

/** Builders for Store contract tests: valid rows with every field set, overridable per test. */

export const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const DAY = 86_400_000;
export { DAY };

let seq = 0;
/** Ids that sort in creation order, like the service's ULIDs. */
export const nextId = (prefix: string): string => `${prefix}_${String(++seq).padStart(10, '0')}`;

export function eventRow(accountId: string, over: Partial<EventRow> = {}): EventRow {
  const id = over.id ?? nextId('evt');
  return {
    id,
    accountId,
    type: 'auth.login.failure',
    eventId: null,
    occurredAt: T0,
    receivedAt: T0,
    actorId: 'user_1',
    ip: '203.0.113.7',
    riskScore: 10,
    tags: [],
    doc: { id, event: over.type ?? 'auth.login.failure', nested: { list: [1, 'two', null], unicode: 'żółw ✓' } },
    ...over,
  };
}

export function alertRow(accountId: string, over: Partial<AlertRow> = {}): AlertRow {
  return {
    id: nextId('alr'),
    accountId,
    type: 'auth.brute_force.account',
    severity: 'high',
    subject: 'user_1',
    status: 'open',
    count: 1,
    firstSeen: T0,
    lastSeen: T0,
    actorId: 'user_1',
    eventIds: [],
    details: { threshold: 10 },
    assignee: null,
    ...over,
  };
}

export function usage(accountId: string, used: number, dropped = 0, at = T0): UsageDelta {
  const iso = new Date(at).toISOString();
  return { accountId, period: iso.slice(0, 7), day: iso.slice(0, 10), used, dropped };
}

/** One event id's idempotency row through the store's lookup of many (undefined when there is none). */
export async function idempotencyOf(store: Store, accountId: string, eventId: string, since: number): Promise<IdempotencyRow | undefined> {
  return (await store.events.findIdempotency(accountId, [eventId], since)).get(eventId);
}

export function idempotency(accountId: string, eventId: string, createdAt = T0): IdempotencyRow {
  return {
    accountId,
    eventId,
    response: { id: `evt_for_${eventId}`, status: 'accepted', risk: { score: 3 } },
    createdAt,
    payloadDigest: `digest-of-${eventId}`,
  };
}

export function batch(parts: Partial<CommitBatch>): CommitBatch {
  return { events: [], alerts: [], usage: [], idempotency: [], ...parts };
}

/** What listEvents must return for a filter, newest id first: the reference model. */
export function matches(e: EventRow, f: EventFilter): boolean {
  return (
    (f.type === undefined || e.type === f.type) &&
    (f.typePrefix === undefined || e.type.startsWith(f.typePrefix)) &&
    (f.actorId === undefined || e.actorId === f.actorId) &&
    (f.ip === undefined || e.ip === f.ip) &&
    (f.minRisk === undefined || e.riskScore >= f.minRisk) &&
    (f.since === undefined || e.occurredAt >= f.since) &&
    (f.until === undefined || e.occurredAt < f.until) &&
    (f.tag === undefined || e.tags.includes(f.tag))
  );
}

/** Strings that break naive SQL or LIKE handling; each must only ever match itself. */
export const HOSTILE = ["'", '"', '%', '_', '\\', "'; drop table events; --", '" or 1=1 --', 'a%b', 'a_b', '\\%', '[x]', 'a","b', '*', '?'];

/** Event types and tags used by the filter tests, including LIKE look-alikes. */
export const TYPES = ['auth.login.failure', 'auth.login.success', 'auth.login_x.y', 'auth.loginax.y', 'auth.logout', 'payment.card.added', 'api.request'];
export const TAGS = ['inferred:auth.failure', 'a_b', 'axb', '100%', '1000', "it's", 'quote"tag', 'back\\slash', 'a","b'];
export const ACTORS = ['user_1', 'user_2', 'user%', "o'brien", 'user_'];
export const IPS = ['203.0.113.7', '198.51.100.1', '2001:db8::1'];
