import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';
import { openPostgresStore, type PostgresOptions, type PostgresStore } from '../../src/storage/postgres.js';
import { ManualClock } from '../../src/util/clock.js';
import { T0 } from '../contract/store-fixtures.js';

/** The test server; override with VIGIL_TEST_DATABASE_URL. */
export const PG_URL = process.env.VIGIL_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** Why the server cannot be used, or undefined when it can. */
async function probe(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

const unavailable = await probe();

/**
 * `describe` when PostgreSQL answers. Without a server the suite is skipped with a clear
 * message, except under CI=true, where a missing server is a failure.
 */
export function describePostgres(name: string, body: () => void): void {
  if (unavailable === undefined) {
    describe(name, body);
    return;
  }
  const why = `PostgreSQL at ${PG_URL} is not reachable (${unavailable})`;
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs PostgreSQL (CI=true)', () => {
        throw new Error(`${why}; CI requires it. Start the server or set VIGIL_TEST_DATABASE_URL.`);
      });
    });
    return;
  }
  console.warn(`[skip] ${name}: ${why}. Set VIGIL_TEST_DATABASE_URL to run these tests.`);
  describe.skip(name, body);
}

/** A schema name no other run uses. */
/** The database URL whose connections use this schema (the service's `schema` parameter). */
export function schemaUrl(schema: string, url = PG_URL): string {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.toString();
}

export const freshSchema = (): string => `vigil_test_${process.pid}_${randomBytes(5).toString('hex')}`;

/** Superuser-side connection for test set-up: dropping schemas, terminating backends. */
export function adminPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 3, application_name: 'vigil-test-admin' });
  pool.on('error', () => {});
  return pool;
}

export async function dropSchema(admin: pg.Pool, schema: string): Promise<void> {
  await admin.query(`drop schema if exists "${schema}" cascade`);
}

/** A migrated store in its own fresh schema, with its own application_name so tests can find its backends. */
export async function openTestStore(options: PostgresOptions = {}, url = PG_URL): Promise<{ store: PostgresStore; schema: string; applicationName: string }> {
  const schema = options.schema ?? freshSchema();
  const applicationName = options.applicationName ?? `vigil-${schema}`;
  const store = openPostgresStore(url, { poolSize: 4, clock: new ManualClock(T0), ...options, schema, applicationName });
  await store.migrate();
  return { store, schema, applicationName };
}
