import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp } from './support.js';

/** SHA-1 of "password": on the shipped breached-password list. */
export const BREACHED_SHA1 = '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8';
/** On the fixture feeds' example blocklist. */
export const BLOCKLISTED = '91.240.118.172';
/** The test clock's day: every event below happens on it, before its noon. */
export const DAY = Date.UTC(2026, 0, 15);
const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();

/** The stuffing campaign's addresses: six of one /24. */
export const STUFFING_ADDRESSES = ['203.0.113.20', '203.0.113.21', '203.0.113.22', '203.0.113.23', '203.0.113.24', '203.0.113.25'];
export const STUFFED_ACTORS = Array.from({ length: 30 }, (_, i) => `stuffed-${String(i + 1).padStart(2, '0')}`);
export const NOISY_EVENTS = 400;
/** A login sent at noon that happened at 03:30: it belongs to the 03:00 hour, not to the hour it arrived in. */
export const BACKFILLED_AT = DAY + 3.5 * HOUR;

/**
 * A small realistic day of one account: a credential-stuffing run (one breached password tried
 * on 30 accounts from six addresses of one /24), an account takeover from a blocklisted address
 * ending in a large export, a noisy service account, SSH brute force on a host, and one
 * backfilled login.
 */
export function dayEvents(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  STUFFED_ACTORS.forEach((actor, i) =>
    events.push({
      event: 'auth.login.failure',
      actor_id: actor,
      ip: STUFFING_ADDRESSES[i % STUFFING_ADDRESSES.length],
      user_agent: 'python-requests/2.31.0',
      password_sha1: BREACHED_SHA1,
      timestamp: at(DAY + 9 * HOUR + i * 10_000),
    }),
  );
  const dana = { actor_id: 'dana', ip: BLOCKLISTED, session_id: 'sess-dana', metadata: { device_id: 'dana-laptop' } };
  for (let i = 0; i < 3; i++) events.push({ ...dana, event: 'auth.login.failure', timestamp: at(DAY + 10 * HOUR + i * 10_000) });
  events.push({ ...dana, event: 'auth.login.success', timestamp: at(DAY + 10 * HOUR + 5 * 60_000) });
  events.push({ ...dana, event: 'auth.mfa.disabled', timestamp: at(DAY + 10 * HOUR + 10 * 60_000) });
  events.push({
    ...dana,
    event: 'data.exported',
    metadata: { device_id: 'dana-laptop', rows: 50_000, format: 'csv' },
    timestamp: at(DAY + 10 * HOUR + 20 * 60_000),
  });
  for (let i = 0; i < NOISY_EVENTS; i++)
    events.push({
      event: 'api.request',
      actor_id: 'svc-backup',
      ip: '10.0.0.5',
      user_agent: 'backup-agent/1.0',
      timestamp: at(DAY + Math.floor((i * 11.9 * HOUR) / NOISY_EVENTS)),
    });
  for (let i = 0; i < 12; i++)
    events.push({ event: 'server.ssh.login.failure', actor_id: 'root', ip: '203.0.113.200', host: 'web1', timestamp: at(DAY + 11 * HOUR + i * 10_000) });
  events.push({ event: 'server.ssh.login.success', actor_id: 'deploy', ip: '10.0.0.6', host: 'web1', timestamp: at(DAY + 11.5 * HOUR) });
  events.push({ event: 'auth.login.success', actor_id: 'old-timer', ip: '10.0.0.7', timestamp: at(BACKFILLED_AT) });
  return events;
}

export interface DayApp {
  readonly t: TestApp;
  readonly acct: { id: string; secret: string };
  readonly other: { id: string; secret: string };
  close(): Promise<void>;
}

/** An app with the fixture feeds (so the blocklist is known), the day sent through the batch endpoint at its noon, and a second, empty account. */
export async function dayApp(): Promise<DayApp> {
  const feedsDir = await mkdtemp(join(tmpdir(), 'vigil-test-feeds-'));
  await cp(new URL('../fixtures/feeds/', import.meta.url).pathname, feedsDir, { recursive: true });
  const t = await roomyApp({ VIGIL_FEEDS_DIR: feedsDir, VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32' });
  t.clock.set(DAY + 12 * HOUR);
  const acct = await t.account('business');
  const other = await t.account('business');
  const events = dayEvents().sort((a, b) => String(a.timestamp).localeCompare(String(b.timestamp)));
  const backfill = events.findIndex((e) => e.actor_id === 'old-timer');
  // In time order, as a client sends a day; the backfilled login comes last, at noon.
  const ordered = [...events.slice(0, backfill), ...events.slice(backfill + 1), events[backfill] as Record<string, unknown>];
  for (let from = 0; from < ordered.length; from += 100) {
    const res = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events/batch',
      headers: bearer(acct.secret),
      payload: { events: ordered.slice(from, from + 100) },
    });
    expect(res.statusCode, res.body).toBe(202);
  }
  return {
    t,
    acct,
    other,
    async close() {
      await t.close();
      await rm(feedsDir, { recursive: true, force: true });
    },
  };
}
