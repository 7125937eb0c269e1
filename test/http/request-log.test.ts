import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bearer, testApp } from '../helpers/app.js';
import { faultyStore } from './support.js';

/** The app on a faulty in-memory store, logging JSON lines at `level` into `lines`. */
async function loggingApp(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write: (chunk, _enc, done) => (
      lines.push(
        ...chunk
          .toString()
          .trim()
          .split('\n')
          .map((l: string) => JSON.parse(l) as Record<string, unknown>),
      ),
      done()
    ),
  });
  const { store, faults } = faultyStore();
  const t = await testApp({}, { store, logger: pino({ level }, sink) });
  const { secret } = await t.account();
  const send = () =>
    t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(secret),
      payload: { event: 'auth.login.success', actor_id: 'u1', ip: '203.0.113.9' },
    });
  return { lines, faults, send, close: () => t.close() };
}

describe('request logging', () => {
  it('at info, an accepted event writes no log line; a failed one writes its error with the request id', async () => {
    const app = await loggingApp('info');
    try {
      const before = app.lines.length;
      const ok = await app.send();
      expect(ok.statusCode).toBe(202);
      expect(app.lines.slice(before)).toEqual([]);

      app.faults.commit = () => new Error('disk on fire');
      const failed = await app.send();
      expect(failed.statusCode).toBe(500);
      const requestId = failed.headers['x-request-id'];
      expect(requestId).toMatch(/^req_/);
      const logged = app.lines.slice(before).filter((l) => l.reqId === requestId);
      expect(logged.map((l) => l.msg)).toContain('request failed');
      expect(logged.find((l) => l.msg === 'request failed')?.level).toBe(50);
      expect(JSON.stringify(logged)).toContain('disk on fire');
    } finally {
      await app.close();
    }
  });

  it('at debug, every request writes one access line bound to its request id', async () => {
    const app = await loggingApp('debug');
    try {
      const before = app.lines.length;
      const res = await app.send();
      expect(res.statusCode).toBe(202);
      const access = app.lines.slice(before).filter((l) => l.msg === 'request completed');
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ reqId: res.headers['x-request-id'], method: 'POST', url: '/v1/events', status: 202, level: 20 });
      expect(app.lines.slice(before).some((l) => l.msg === 'incoming request')).toBe(false);
    } finally {
      await app.close();
    }
  });
});
