import { buildApp, type VigilApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createServices, type Services } from '../../src/services.js';
import type { Store } from '../../src/storage/store.js';
import { ManualClock } from '../../src/util/clock.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  readonly vigil: VigilApp;
  readonly services: Services;
  readonly clock: ManualClock;
  readonly config: Config;
  /** Creates an account with a secret and a publishable key. */
  account(plan?: string, allowedOrigins?: string[]): Promise<{ id: string; secret: string; publishable: string }>;
  close(): Promise<void>;
}

/**
 * The real app on in-memory SQLite (or a given store), with a manual clock and the
 * admin API enabled. Requests go through Fastify inject: the whole HTTP lifecycle.
 */
export async function testApp(env: Record<string, string> = {}, options: { store?: Store; clock?: ManualClock } = {}): Promise<TestApp> {
  const config = loadConfig({ VIGIL_DATA_DIR: ':memory:', VIGIL_ADMIN_TOKEN: ADMIN_TOKEN, VIGIL_SQLITE_SYNCHRONOUS: 'normal', ...env });
  const clock = options.clock ?? new ManualClock();
  const services = await createServices(config, { clock, store: options.store });
  const vigil = await buildApp(services);
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
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
