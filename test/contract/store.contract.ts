import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../src/storage/store.js';
import { accountsContract } from './store/accounts.contract.js';
import { alertsContract } from './store/alerts.contract.js';
import { auditContract } from './store/audit.contract.js';
import { commitContract } from './store/commit.contract.js';
import { storeContext } from './store/context.js';
import { eventsContract } from './store/events.contract.js';
import { membersContract } from './store/members.contract.js';
import { sessionsContract } from './store/sessions.contract.js';
import { statsContract } from './store/stats.contract.js';
import { storeItselfContract } from './store/store.contract.js';
import { threatModelsContract } from './store/threat-models.contract.js';
import { webhooksContract } from './store/webhooks.contract.js';

/** A migrated, empty store and how to throw it away. */
export interface StoreUnderTest {
  readonly store: Store;
  dispose(): Promise<void>;
}

/**
 * The behaviour every Store implementation must show, one suite per aggregate
 * (test/contract/store/). Each test gets a fresh, migrated, empty store from `factory`.
 */
export function storeContract(name: string, factory: () => Promise<StoreUnderTest>): void {
  describe(`Store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    beforeEach(async () => {
      sut = await factory();
    });
    afterEach(async () => {
      await sut.dispose();
    });
    const context = storeContext(() => sut.store);
    for (const suite of [
      storeItselfContract,
      accountsContract,
      commitContract,
      eventsContract,
      alertsContract,
      statsContract,
      sessionsContract,
      threatModelsContract,
      webhooksContract,
      membersContract,
      auditContract,
    ])
      suite(context);
  });
}
