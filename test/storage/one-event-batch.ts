import type { CommitBatch } from '../../src/storage/types.js';

/**
 * A commit of one login failure and its usage row. `padding` adds that many characters to the
 * stored document, for tests that need the WAL to grow.
 */
export function oneEventBatch(accountId: string, id: string, options: { readonly actorId?: string; readonly padding?: number } = {}): CommitBatch {
  return {
    events: [
      {
        id,
        accountId,
        type: 'auth.login.failure',
        eventId: null,
        occurredAt: 1,
        receivedAt: 1,
        actorId: options.actorId ?? 'u1',
        ip: null,
        riskScore: 10,
        tags: [],
        doc: options.padding === undefined ? { type: 'auth.login.failure' } : { type: 'auth.login.failure', padding: 'x'.repeat(options.padding) },
      },
    ],
    alerts: [],
    usage: [{ accountId, period: '2026-11', day: '2026-11-26', used: 1, dropped: 0 }],
    idempotency: [],
  };
}
