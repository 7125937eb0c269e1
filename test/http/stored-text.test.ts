import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { TestApp } from '../helpers/app.js';
import { allEvents, postEvent, roomyApp } from './support.js';

/**
 * The stored document and idempotency response are written as text assembled from parts (the
 * 202 text is serialised once and reused): read back raw from the database file, each must be
 * exactly the JSON of what it holds, and hold what the API answered.
 */
describe('stored JSON text (SQLite file)', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-stored-text-'));
    t = await roomyApp({}, { store: openSqliteStore({ dataDir: dir, synchronous: 'normal' }) });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('event documents and idempotency responses are canonical JSON matching the 202 answers', async () => {
    const acct = await t.account('pro');
    const answers = new Map<string, { body: string; json: Record<string, unknown> }>();
    const events = [
      ...Array.from({ length: 12 }, (_, i) => ({
        event: 'auth.login.failure',
        actor_id: 'victim',
        ip: '185.220.101.1',
        event_id: `fail-${i}`,
        user_agent: 'sqlmap/1.7',
      })),
      {
        event: 'api.request',
        actor_id: 'u"q\\1',
        ip: '8.8.8.8',
        event_id: 'scan-1',
        request: { method: 'get', path: "/items/1' or 1=1--", query: 'q=<script>alert(1)</script>' },
      },
      { event: 'custom.app.thing', metadata: { note: 'quote " backslash \\ line\u2028sep é 😀', n: 1.5e-7, list: [1, null, true] }, extra_field: 'kept' },
    ];
    for (const event of events) {
      const res = await postEvent(t, acct.secret, event);
      expect(res.statusCode).toBe(202);
      answers.set(res.json().id, { body: res.body, json: res.json() });
    }
    const alerted = [...answers.values()].filter((a) => (a.json.alerts as unknown[]).length > 0);
    expect(alerted.length).toBeGreaterThan(0);

    const db = new SqliteDatabase(join(dir, 'vigil.db'), { readonly: true });
    try {
      const docs = db.prepare('select id, doc from events where account_id = ?').all(acct.id) as { id: string; doc: string }[];
      expect(docs).toHaveLength(events.length);
      const api = new Map((await allEvents(t, acct.secret)).map((e) => [e.id as string, e]));
      for (const { id, doc } of docs) {
        expect(JSON.stringify(JSON.parse(doc))).toBe(doc);
        const parsed = JSON.parse(doc);
        const answer = answers.get(id)?.json as Record<string, unknown>;
        expect({ risk: parsed.risk, tags: parsed.tags, alerts: parsed.alerts }).toEqual({ risk: answer.risk, tags: answer.tags, alerts: answer.alerts });
        expect(api.get(id)).toMatchObject({ id, risk: answer.risk });
      }
      const responses = db.prepare('select event_id, response from idempotency where account_id = ?').all(acct.id) as { event_id: string; response: string }[];
      expect(responses).toHaveLength(events.length - 1);
      const bodies = new Set([...answers.values()].map((a) => a.body));
      for (const { response } of responses) expect(bodies.has(response)).toBe(true);
    } finally {
      db.close();
    }
  });
});
