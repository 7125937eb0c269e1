import { afterAll, beforeAll } from 'vitest';
import type pg from 'pg';
import { storeContract } from '../contract/store.contract.js';
import { adminPool, describePostgres, dropSchema, openTestStore } from './pg-helpers.js';

describePostgres('PostgreSQL store', () => {
  let admin: pg.Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(async () => {
    await admin.end();
  });

  storeContract('PostgreSQL (fresh schema per test)', async () => {
    const { store, schema } = await openTestStore();
    return {
      store,
      dispose: async () => {
        await store.close();
        await dropSchema(admin, schema);
      },
    };
  });
});
