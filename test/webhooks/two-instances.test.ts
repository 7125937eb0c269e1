import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { adminPool, describePostgres, dropSchema, freshSchema, openTestStore } from '../storage/pg-helpers.js';

const ALERTS = 60;

describePostgres('webhooks: two instances on one PostgreSQL database', () => {
  const schema = freshSchema();
  let a: TestApp;
  let b: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    const env = { VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: '10', VIGIL_WEBHOOK_TIMEOUT_MS: '5000' };
    a = await testApp(env, { store: (await openTestStore({ schema })).store });
    b = await testApp(env, { store: (await openTestStore({ schema })).store });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await receiver.stop();
    const admin = adminPool();
    await dropSchema(admin, schema).finally(() => admin.end());
  });

  it('every delivery reaches the receiver exactly once while both dispatch at once', async () => {
    const acct = await a.account('pro');
    const hook = await a.vigil.app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(acct.secret), payload: { url: receiver.url } });
    expect(hook.statusCode, hook.body).toBe(201);
    // The outbox fills while neither instance dispatches; then both start at once.
    const dispatchers = [a.services.webhookDispatcher, b.services.webhookDispatcher];
    for (const d of dispatchers) await d?.stop();
    for (let i = 0; i < ALERTS; i++) {
      const res = await a.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        headers: bearer(acct.secret),
        payload: { event: 'auth.mfa.disabled', actor_id: `user-${i}`, timestamp: a.clock.now() },
      });
      expect(res.statusCode).toBe(202);
    }
    for (const d of dispatchers) d?.start();
    // Besides both pollers, claim from both instances in parallel as fast as possible.
    const claimed: number[] = [0, 0];
    await Promise.all(
      dispatchers.map(async (d, i) => {
        for (let round = 0; round < 30; round++) claimed[i] = (claimed[i] as number) + ((await d?.runOnce()) ?? 0);
      }),
    );
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(ALERTS), { timeout: 20_000, interval: 20 });
    const list = (await b.vigil.app.inject({ method: 'GET', url: `/v1/webhooks/${hook.json().id}/deliveries?limit=500`, headers: bearer(acct.secret) })).json()
      .data;
    expect(list).toHaveLength(ALERTS);
    await vi.waitFor(async () => {
      const now = (await b.vigil.app.inject({ method: 'GET', url: `/v1/webhooks/${hook.json().id}/deliveries?limit=500`, headers: bearer(acct.secret) })).json()
        .data;
      expect(now.every((d: { status: string; attempts: number }) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    });
    const byId = receiver.byId();
    expect(byId.size).toBe(ALERTS);
    expect([...byId.values()].filter((r) => r.length !== 1)).toEqual([]);
    expect(receiver.received).toHaveLength(ALERTS);
    const sent = dispatchers.map((d) => d?.sent ?? 0);
    expect((sent[0] as number) + (sent[1] as number)).toBe(ALERTS);
    console.log(`two instances: ${ALERTS} deliveries, ${receiver.received.length} requests received; sent by each instance: ${sent.join(' + ')}`);
  });
});
