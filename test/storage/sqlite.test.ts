import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import { storeContract } from '../contract/store.contract.js';

storeContract('SQLite :memory:', async () => {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  await store.migrate();
  return { store, dispose: () => store.close() };
});

storeContract('SQLite file (WAL, synchronous=FULL)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-store-'));
  const store = openSqliteStore({ dataDir: dir, synchronous: 'full' });
  await store.migrate();
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
