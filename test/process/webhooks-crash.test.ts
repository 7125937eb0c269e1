import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { api, provision, startService, tempDir, type Service } from './service.js';

const ALERTS = 5;

async function openAlerts(s: Service, key: string, prefix: string): Promise<void> {
  for (let i = 0; i < ALERTS; i++) {
    const res = await api(s.base, 'POST', '/v1/events', key, { event: 'auth.mfa.disabled', actor_id: `${prefix}-${i}` });
    expect(res.status).toBe(202);
  }
}

async function allDelivered(s: Service, key: string, hookId: string): Promise<{ id: string; status: string; attempts: number }[]> {
  let list: { id: string; status: string; attempts: number }[] = [];
  await vi.waitFor(
    async () => {
      list = (await api(s.base, 'GET', `/v1/webhooks/${hookId}/deliveries?limit=500`, key)).json.data;
      expect(list.length === ALERTS && list.every((d) => d.status === 'delivered')).toBe(true);
    },
    { timeout: 40_000, interval: 100 },
  );
  return list;
}

describe('webhooks across a SIGKILL', () => {
  const running: Service[] = [];
  const receiver = new WebhookReceiver();
  afterEach(async () => {
    for (const s of running.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await receiver.stop();
    receiver.received.length = 0;
  });
  const env = (pollMs: number) => ({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: String(pollMs), VIGIL_WEBHOOK_TIMEOUT_MS: '1000' });

  it('killed between the alert and its delivery: the restarted service delivers every alert, once', { timeout: 120_000 }, async () => {
    await receiver.start();
    const dir = tempDir('vigil-webhook-crash-');
    // The first service polls once at start, then not for a minute: alerts commit, nothing is sent.
    const first = await startService(dir, env(60_000));
    running.push(first);
    const { key } = await provision(first.base, 'pro');
    const hook = await api(first.base, 'POST', '/v1/webhooks', key, { url: receiver.url });
    expect(hook.status).toBe(201);
    await openAlerts(first, key, 'before-crash');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(receiver.received).toHaveLength(0);

    const second = await startService(dir, env(50));
    running.push(second);
    const list = await allDelivered(second, key, hook.json.id);
    const byId = receiver.byId();
    expect(new Set(byId.keys())).toEqual(new Set(list.map((d) => d.id)));
    expect([...byId.values()].every((r) => r.length === 1)).toBe(true);
    console.log(`SIGKILL before dispatch: ${ALERTS} alerts, ${receiver.received.length} requests after restart`);
  });

  it('killed mid-delivery: the lease runs out and the same delivery ids are sent again', { timeout: 120_000 }, async () => {
    await receiver.start();
    receiver.respond = () => null;
    const dir = tempDir('vigil-webhook-crash-');
    const first = await startService(dir, env(50));
    running.push(first);
    const { key } = await provision(first.base, 'pro');
    const hook = await api(first.base, 'POST', '/v1/webhooks', key, { url: receiver.url });
    await openAlerts(first, key, 'in-flight');
    await vi.waitFor(() => expect(receiver.received.length).toBe(ALERTS), { timeout: 20_000, interval: 20 });
    const heldIds = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    receiver.respond = () => ({ status: 200 });
    const second = await startService(dir, env(50));
    running.push(second);
    const list = await allDelivered(second, key, hook.json.id);
    expect(new Set(list.map((d) => d.id))).toEqual(heldIds);
    const byId = receiver.byId();
    // At least once: each id twice (held by the killed service, answered after restart), never more.
    expect([...byId.values()].map((r) => r.length)).toEqual(Array(ALERTS).fill(2));
    console.log(
      `SIGKILL mid-delivery: ${ALERTS} deliveries, ${receiver.received.length} requests in all (${ALERTS} held, ${receiver.received.length - ALERTS} after restart)`,
    );
  });
});
