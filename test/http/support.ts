import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import type { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { bearer, SCALE_OUT, testApp, type TestApp } from '../helpers/app.js';

/** Stores an open alert of the account straight through the store (no detector needed); answers its id. */
export async function storeOpenAlert(t: TestApp, accountId: string): Promise<string> {
  const id = `alr_${Math.random().toString(36).slice(2, 12)}`;
  const now = t.clock.now();
  const alert = { id, accountId, type: 'auth.brute_force.account', severity: 'high', subject: id, status: 'open' as const, count: 1 };
  await t.services.store.commit({
    events: [],
    alerts: [{ alert: { ...alert, firstSeen: now, lastSeen: now, actorId: 'u1', eventIds: [], details: {} }, opened: true }],
    usage: [],
    idempotency: [],
  });
  return id;
}

/** A plans file keeping the default batch sizes and caps but with rate limits too high to matter. */
export function highLimitPlansFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-plans-'));
  const file = join(dir, 'plans.json');
  const high = { rpm: 100_000_000, eps: 100_000_000 };
  writeFileSync(file, JSON.stringify({ plans: { free: high, starter: high, pro: high, business: high } }));
  return file;
}

/** The real app with rate limits out of the way (for tests that send many requests). */
export function roomyApp(env: Record<string, string> = {}, options: Parameters<typeof testApp>[1] = {}): Promise<TestApp> {
  return testApp(
    { VIGIL_PLANS_FILE: highLimitPlansFile(), VIGIL_IP_LIMITS: '127.0.0.0/8=100000000', VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE: '1000000', ...env },
    options,
  );
}

export async function postEvent(
  t: TestApp,
  key: string,
  payload: unknown,
  url = '/v1/events',
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.vigil.app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload: payload as object });
}

export async function postRaw(t: TestApp, key: string, body: string, contentType = 'application/json', url = '/v1/events'): Promise<LightMyRequestResponse> {
  return t.vigil.app.inject({ method: 'POST', url, headers: { ...bearer(key), 'content-type': contentType }, payload: body });
}

export async function getJson(t: TestApp, key: string, url: string): Promise<LightMyRequestResponse> {
  return t.vigil.app.inject({ method: 'GET', url, headers: bearer(key) });
}

/** Asserts the documented error shape and returns the body. */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): Record<string, unknown> & { details?: { index?: number; field: string; message: string }[] } {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.request_id).toMatch(/^req_/);
  expect(res.headers['x-request-id']).toBe(body.request_id);
  return body;
}

export async function usedThisMonth(t: TestApp, secret: string): Promise<number> {
  const res = await getJson(t, secret, '/v1/usage');
  expect(res.statusCode).toBe(200);
  return res.json().used as number;
}

export async function allEvents(t: TestApp, secret: string, query = ''): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const qs: string = `limit=500${query ? `&${query}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await getJson(t, secret, `/v1/events?${qs}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    out.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return out;
}

export type Fault = () => Error;

/** A method of the Store or of one of its aggregates, by name (the names are unique across them). */
export type StoreMethod = {
  [K in keyof Store]-?: Store[K] extends (...args: never[]) => unknown ? K : NonNullable<Store[K]> extends object ? keyof NonNullable<Store[K]> : never;
}[keyof Store];

/**
 * The real in-memory SQLite store behind a proxy: `faults[method]` set to a factory makes
 * that method (of the Store or of an aggregate) reject with the error it makes, until it is cleared.
 */
export function faultyStore(): { store: Store; faults: Partial<Record<StoreMethod, Fault>> } {
  const real = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  const faults: Partial<Record<string, Fault>> = {};
  const faulty = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop, _receiver) {
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value === 'object' && value !== null) return faulty(value);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const fault = faults[prop as string];
          if (fault) return Promise.reject(fault());
          return (value as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  return { store: faulty<Store>(real), faults };
}

/** Every Redis key of the account (its name and every text it holds), or the in-process state records under its scope. */
export async function stateTexts(t: TestApp, accountId: string): Promise<string[]> {
  if (SCALE_OUT) {
    const { Redis } = await import('ioredis');
    const { scanKeys, textsOfKey } = await import('../../src/redis/cluster-nodes.js');
    const client = new Redis(t.config.redisUrl as string);
    try {
      const out: string[] = [];
      for await (const keys of scanKeys(client, `${t.config.redisPrefix}*`))
        for (const key of keys) if (key.includes(accountId)) out.push(key, ...(await textsOfKey(client, key)));
      return out;
    } finally {
      client.disconnect();
    }
  }
  const memory = t.services.state as MemoryStateStore;
  const scope = memory.scope(accountId);
  return memory
    .dump()
    .records.filter(([key]) => key.startsWith(`${scope}|`))
    .map((record) => JSON.stringify(record));
}
