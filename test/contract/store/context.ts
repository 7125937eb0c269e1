import { expect } from 'vitest';
import type { Store } from '../../../src/storage/store.js';
import type { EventFilter, EventRow } from '../../../src/storage/types.js';
import { nextId, T0 } from '../store-fixtures.js';

/** What every aggregate's contract gets: the store under test (fresh, migrated, empty in each test) and helpers. */
export interface StoreContext {
  readonly store: Store;
  account(id: string, createdAt?: number): ReturnType<Store['accounts']['createAccount']>;
  key(accountId: string, hash: string, kind?: 'secret' | 'publishable'): ReturnType<Store['accounts']['createKey']>;
  /** Every page of a listing, checking that the cursor moves strictly down. */
  allPages(accountId: string, filter: EventFilter, limit: number): Promise<EventRow[]>;
}

export function storeContext(current: () => Store): StoreContext {
  return {
    get store() {
      return current();
    },
    account: (id, createdAt = T0) => current().accounts.createAccount({ id, name: `name of ${id}`, plan: 'starter', createdAt }),
    key: (accountId, hash, kind = 'secret') =>
      current().accounts.createKey({
        id: nextId('key'),
        accountId,
        kind,
        hash,
        prefix: `vgl_sk_${hash.slice(0, 4)}`,
        allowedOrigins: ['https://a.example', "https://o'k.example"],
        createdAt: T0,
      }),
    async allPages(accountId, filter, limit) {
      const out: EventRow[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 1000; guard++) {
        const page = await current().events.listEvents(accountId, filter, limit, cursor);
        expect(page.items.length).toBeLessThanOrEqual(limit);
        out.push(...page.items);
        if (page.nextCursor === null) return out;
        expect(page.items.length).toBe(limit);
        cursor = page.nextCursor;
      }
      throw new Error('pagination did not end');
    },
  };
}
