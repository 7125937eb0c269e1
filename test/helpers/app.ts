import type { FastifyBaseLogger } from 'fastify';
import { buildApp, type VigilApp } from '../../src/app.js';
import type { Catalog } from '../../src/catalog/catalog.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createServices, type Services } from '../../src/services.js';
import type { Store } from '../../src/storage/store.js';
import type { EnrichmentService } from '../../src/enrichment/index.js';
import type { DryRunLimits } from '../../src/threat-models/dry-run.js';
import type { SuspensionPolicy } from '../../src/threat-models/budget.js';
import { ManualClock } from '../../src/util/clock.js';
import { GEOIP_FIXTURE } from '../fixtures/geoip/build.js';
import { deleteKeysWithPrefix, unscopedKeys } from './redis-keys.js';

/**
 * VIGIL_TEST_MODE=scaleout (the `scaleout` vitest project) runs the same HTTP suites on
 * PostgreSQL (a fresh schema per app) and Redis (a fresh key prefix per app).
 */
export const SCALE_OUT = process.env.VIGIL_TEST_MODE === 'scaleout';

async function scaleOutBackends(clock: ManualClock) {
  const { openTestStore, adminPool, dropSchema } = await import('../storage/pg-helpers.js');
  const { REDIS_URL } = await import('../limits/redis-helper.js');
  const { store, schema } = await openTestStore({ clock });
  const prefix = `vigil-test:http:${schema}:`;
  return {
    store,
    env: { VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix },
    /** Drops the schema and the keys; throws if any key the test wrote lacks an account scope. */
    async cleanup() {
      const admin = adminPool();
      await dropSchema(admin, schema).finally(() => admin.end());
      const { Redis } = await import('ioredis');
      const client = new Redis(REDIS_URL);
      try {
        const unscoped = await unscopedKeys(client, prefix);
        if (unscoped.length > 0) throw new Error(`Redis keys without an account scope: ${unscoped.slice(0, 5).join(', ')}`);
      } finally {
        await deleteKeysWithPrefix(client, prefix);
        client.disconnect();
      }
    },
  };
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * The GeoIP data of test apps: the fixture holds the location and ASN of every address the tests
 * write, a few kilobytes to open; an app whose events come from addresses generated at random
 * (or any address of the world) asks for the shipped data with `geoip: 'world'`.
 */
export const GEOIP_FIXTURE_ENV = { VIGIL_GEOIP_CITY: GEOIP_FIXTURE.city, VIGIL_GEOIP_ASN: GEOIP_FIXTURE.asn };

export interface TestApp {
  readonly vigil: VigilApp;
  readonly services: Services;
  readonly clock: ManualClock;
  readonly config: Config;
  /** Creates an account with a secret and a publishable key. */
  account(plan?: string, allowedOrigins?: string[]): Promise<{ id: string; secret: string; publishable: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly store?: Store;
  readonly clock?: ManualClock;
  readonly logger?: FastifyBaseLogger;
  /** In place of the enrichment the configuration opens (then `geoip` does not apply). */
  readonly enrichment?: EnrichmentService;
  /** The GeoIP fixture (default) or the shipped data of the whole world. */
  readonly geoip?: 'fixture' | 'world';
  /** In place of the built-in catalog. */
  readonly catalog?: Catalog;
  /** In place of DRY_RUN_LIMITS. */
  readonly dryRunLimits?: DryRunLimits;
  /** In place of parts of SUSPENSION_POLICY. */
  readonly threatModelBudget?: Partial<SuspensionPolicy>;
}

/**
 * The real app on in-memory SQLite (or a given store), with a manual clock and the
 * admin API enabled. Requests go through Fastify inject: the whole HTTP lifecycle.
 */
export async function testApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? new ManualClock();
  const scaleOut = SCALE_OUT && !options.store ? await scaleOutBackends(clock) : undefined;
  const geoip = options.geoip === 'world' ? {} : GEOIP_FIXTURE_ENV;
  const config = loadConfig({
    VIGIL_DATA_DIR: ':memory:',
    VIGIL_ADMIN_TOKEN: ADMIN_TOKEN,
    VIGIL_SQLITE_SYNCHRONOUS: 'normal',
    ...geoip,
    ...scaleOut?.env,
    ...env,
  });
  const services = await createServices(config, {
    clock,
    store: options.store ?? scaleOut?.store,
    logger: options.logger,
    enrichment: options.enrichment,
    threatModelBudget: options.threatModelBudget,
  });
  const vigil = await buildApp({
    ...services,
    ...(options.catalog ? { catalog: options.catalog } : {}),
    ...(options.dryRunLimits ? { dryRunLimits: options.dryRunLimits } : {}),
  });
  return {
    vigil,
    services,
    clock,
    config,
    async account(plan = 'pro', allowedOrigins: string[] = []) {
      const created = await vigil.accounts.create(`acct-${plan}`, plan);
      if (!created.ok) throw new Error(created.message);
      const secret = await vigil.accounts.createKey(created.value.id, 'secret');
      const publishable = await vigil.accounts.createKey(created.value.id, 'publishable', allowedOrigins);
      if (!secret.ok || !publishable.ok) throw new Error('key creation failed');
      return { id: created.value.id, secret: secret.value.key, publishable: publishable.value.key };
    },
    async close() {
      await vigil.close();
      await services.shutdown();
      await scaleOut?.cleanup();
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
