import { describe, expect, it } from 'vitest';
import type { WebhookEndpointsTable } from '../../../src/storage/schema.js';
import { pendingDelivery } from '../../../src/storage/webhooks/outbox.js';
import { T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

const endpointRow = (accountId: string, id: string): WebhookEndpointsTable => ({
  id,
  account_id: accountId,
  url: `https://hooks.example/${id}`,
  description: '',
  format: 'vigil',
  min_severity: 'low',
  alert_types: '[]',
  kill_chains_only: 0,
  enabled: 1,
  disabled_reason: null,
  secret: `whsec_${id}`,
  previous_secret: null,
  previous_secret_until: null,
  failing_since: null,
  created_at: T0,
  updated_at: T0,
});

/** The contract of WebhookStore. */
export function webhooksContract(sut: StoreContext): void {
  describe('webhooks', () => {
    it('creates, counts, lists, updates and deletes endpoints, per account', async () => {
      const created = await sut.store.webhooks.createEndpoint(endpointRow('acc_a', 'whe_2'));
      expect(created).toMatchObject({ id: 'whe_2', accountId: 'acc_a', enabled: true, alertTypes: [], killChainsOnly: false, createdAt: T0 });
      await sut.store.webhooks.createEndpoint(endpointRow('acc_a', 'whe_1'));
      await sut.store.webhooks.createEndpoint(endpointRow('acc_b', 'whe_3'));
      expect(await sut.store.webhooks.countEndpoints('acc_a')).toBe(2);
      expect((await sut.store.webhooks.listEndpoints('acc_a')).map((e) => e.id)).toEqual(['whe_1', 'whe_2']);
      expect(await sut.store.webhooks.getEndpoint('acc_b', 'whe_2')).toBeUndefined();
      const updated = await sut.store.webhooks.updateEndpoint('acc_a', 'whe_2', { enabled: 0, disabled_reason: 'off' }, T0 + 1);
      expect(updated).toMatchObject({ enabled: false, disabledReason: 'off', updatedAt: T0 + 1 });
      expect(await sut.store.webhooks.deleteEndpoint('acc_b', 'whe_2')).toBe(false);
      expect(await sut.store.webhooks.deleteEndpoint('acc_a', 'whe_2')).toBe(true);
      expect(await sut.store.webhooks.getEndpoint('acc_a', 'whe_2')).toBeUndefined();
    });

    it('leases due deliveries once, records outcomes only for the lease holder, and prunes finished ones', async () => {
      await sut.store.webhooks.createEndpoint(endpointRow('acc_a', 'whe_1'));
      const due = pendingDelivery('acc_a', 'whe_1', null, 'webhook.test', '{}', T0);
      const later = pendingDelivery('acc_a', 'whe_1', null, 'webhook.test', '{}', T0 + 60_000);
      await sut.store.webhooks.insertDelivery(due);
      await sut.store.webhooks.insertDelivery(later);
      expect((await sut.store.webhooks.listDeliveries('acc_a', 'whe_1', 10)).items.map((d) => d.id)).toEqual([later.id, due.id]);
      const claimed = await sut.store.webhooks.claimDue(T0, 30_000, 'one', 10);
      expect(claimed.map((d) => d.id)).toEqual([due.id]);
      expect(await sut.store.webhooks.claimDue(T0 + 1, 30_000, 'two', 10)).toEqual([]);
      const delivery = claimed[0]!;
      const outcome = { status: 'delivered' as const, nextAttemptAt: T0 + 2, lastStatus: 200, lastError: null, at: T0 + 2 };
      expect(await sut.store.webhooks.finishAttempt(delivery, 'two', outcome)).toBe(false);
      expect(await sut.store.webhooks.finishAttempt(delivery, 'one', outcome)).toBe(true);
      expect(await sut.store.webhooks.getDelivery('acc_a', due.id)).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200, finishedAt: T0 + 2 });
      expect(await sut.store.webhooks.getDelivery('acc_b', due.id)).toBeUndefined();
      expect(await sut.store.webhooks.pruneFinishedDeliveries(T0 + 3)).toBe(1);
      expect(await sut.store.webhooks.getDelivery('acc_a', due.id)).toBeUndefined();
      expect(await sut.store.webhooks.getDelivery('acc_a', later.id)).toBeDefined();
    });
  });
}
