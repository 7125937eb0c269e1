import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/pipeline/validate.js';

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
