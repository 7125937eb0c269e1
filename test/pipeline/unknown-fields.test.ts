import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import type { AccountContext, Plan } from '../../src/event/account.js';
import { EventSchema, RequestSchema } from '../../src/pipeline/event-schema.js';
import { editDistanceCells, FieldSuggester, MAX_FIELD_NAME_LENGTH, SUGGESTION_CELLS_PER_REQUEST, SuggestionBudget } from '../../src/pipeline/unknown-fields.js';
import { validateEvent, validateRequest } from '../../src/pipeline/validate.js';

/** The suggestion for one unknown field, through the validate stage as ingestion runs it. */
function suggestion(body: Record<string, unknown>): string | undefined {
  const result = validateEvent({ event: 'custom.a.b', ...body }, { receivedAt: Date.UTC(2026, 0, 1) });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  expect(result.warnings).toHaveLength(1);
  return result.warnings?.[0]?.did_you_mean;
}

describe('unknown field suggestions', () => {
  it.each([
    [{ actorId: 'x' }, 'actor_id'],
    [{ ACTOR_ID: 'x' }, 'actor_id'],
    [{ 'actor-id': 'x' }, 'actor_id'],
    [{ userId: 'x' }, 'actor_id'],
    [{ ipAddress: '1.2.3.4' }, 'ip'],
    [{ ip_address: '1.2.3.4' }, 'ip'],
    [{ clientIp: '1.2.3.4' }, 'ip'],
    [{ userAgent: 'x' }, 'user_agent'],
    [{ sessionId: 's' }, 'session_id'],
    [{ eventId: 'e' }, 'event_id'],
    [{ occurred_at: 'x' }, 'timestamp'],
    [{ path: '/x' }, 'request.path'],
    [{ url: '/x' }, 'request.path'],
    [{ method: 'GET' }, 'request.method'],
    [{ status: 200 }, 'request.status'],
    [{ statusCode: 200 }, 'request.status'],
    [{ request: { status_code: 200 } }, 'request.status'],
    [{ request: { url: '/x' } }, 'request.path'],
    [{ request: { querystring: 'a=1' } }, 'request.query'],
    [{ emial: 'a@b.c' }, 'email'],
    [{ actor_di: 'x' }, 'actor_id'],
    [{ metdata: {} }, 'metadata'],
    [{ passwordHash: 'x' }, 'password_sha1'],
  ])('%j: did you mean %s?', (body, expected) => {
    expect(suggestion(body)).toBe(expected);
  });

  it.each([[{ colour: 'blue' }], [{ tenant: 't1' }], [{ zz: 1 }], [{ request: { headers: {} } }]])('%j: no suggestion', (body) => {
    expect(suggestion(body)).toBeUndefined();
  });
});

describe('the work spent on unknown fields is bounded by the input', () => {
  const suggester = () => new FieldSuggester(Object.keys(EventSchema.properties), Object.keys(RequestSchema.properties));
  const account = {
    account: { id: 'acc_1', name: 'a', plan: 'pro', createdAt: 0, settings: {} },
    keyId: 'key_1',
    keyKind: 'secret',
    principal: { kind: 'key', keyId: 'key_1', keyPrefix: 'vgl_sk_test', scopes: ['ingest', 'read', 'manage'] },
  } as const;
  const ctx: AccountContext = { ...account, plan: { ...(DEFAULT_PLANS.pro as Plan), batchMax: 100 } };
  const batch = (events: unknown[]) => validateRequest({ kind: 'batch', body: { events } }, ctx, '198.51.100.1', Date.UTC(2026, 0, 1));

  it('a name past the length cap gets no suggestion and no edit distance is computed', () => {
    const before = editDistanceCells();
    expect(suggester().suggest(`actor_id${'x'.repeat(60_000)}`, false)).toBeUndefined();
    expect(suggester().suggest('x'.repeat(MAX_FIELD_NAME_LENGTH + 1), true)).toBeUndefined();
    expect(editDistanceCells()).toBe(before);
  });

  it('names far longer or shorter than every defined field are not compared with them', () => {
    const before = editDistanceCells();
    expect(suggester().suggest('a_rather_long_but_honest_field_name', false)).toBeUndefined();
    expect(editDistanceCells()).toBe(before);
  });

  it('a batch whose events carry over-long names is refused before any suggestion', () => {
    const before = editDistanceCells();
    const result = batch(Array.from({ length: 100 }, (_, i) => ({ event: 'auth.login', [`${i}${'k'.repeat(10_000)}`]: 1 })));
    expect(result.ok).toBe(false);
    expect(editDistanceCells()).toBe(before);
  });

  it('a request spends at most its budget on typing-error suggestions, whatever it sends', () => {
    // 100 events of 100 distinct names, each within two edits of a defined field's length.
    const events = Array.from({ length: 100 }, (_, i) =>
      Object.fromEntries([['event', 'auth.login'], ...Array.from({ length: 100 }, (_, j) => [`sesion_idd${i}_${j}`, 1])]),
    );
    const before = editDistanceCells();
    expect(batch(events).ok).toBe(true);
    expect(editDistanceCells() - before).toBeGreaterThan(0);
    expect(editDistanceCells() - before).toBeLessThanOrEqual(SUGGESTION_CELLS_PER_REQUEST);
  });

  it('past the budget, typing errors get no suggestion but names and synonyms still do', () => {
    const budget = new SuggestionBudget(0);
    const s = suggester();
    expect(s.suggest('emial', false, budget)).toBeUndefined();
    expect(s.suggest('userAgent', false, budget)).toBe('user_agent');
    expect(s.suggest('ipAddress', false, budget)).toBe('ip');
    expect(s.suggest('emial', false)).toBe('email');
  });

  it('a repeated name is worked out once per request', () => {
    const budget = new SuggestionBudget();
    const s = suggester();
    const before = editDistanceCells();
    expect(s.suggest('emial', false, budget)).toBe('email');
    const once = editDistanceCells() - before;
    for (let i = 0; i < 10; i++) expect(s.suggest('emial', false, budget)).toBe('email');
    expect(editDistanceCells() - before).toBe(once);
  });
});
