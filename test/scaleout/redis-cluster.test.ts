/**
 * Scale-out on a real Redis Cluster (three masters started for the run): the limiter, quota and
 * StateStore contracts through the client the service opens with VIGIL_REDIS_CLUSTER=on, and
 * pipelined batch detection (ops of one record go to one node, in order, from a new client's first
 * call on).
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStateStore } from '../../src/redis/state-store.js';
import { RedisRateLimiter } from '../../src/redis/rate-limiter.js';
import { RedisQuotaCounter } from '../../src/redis/quota-counter.js';
import { connectionReady, openRedis } from '../../src/redis/backend.js';
import { limiterContract, quotaContract } from '../contract/limiter.contract.js';
import { stateStoreContract } from '../contract/state-store.contract.js';
import { sameAsOneByOne } from '../detection/batch-replay.js';
import { loadScenarios } from '../detection/fixtures.js';
import { startTestCluster } from '../helpers/redis-cluster.js';
import { api, provision, startService, tempDir } from '../process/service.js';

const cluster = await startTestCluster('redis-cluster');

const client = cluster ? ((await openRedis(cluster.url, { cluster: true })) as Cluster) : undefined;

if (!cluster || !client) {
  describe.skip('Redis Cluster (skipped: redis-server or redis-cli not installed)', () => {
    it('needs redis-server', () => {});
  });
} else {
  describe('Redis Cluster through ioredis Cluster', () => {
    const prefix = `vigil-test:cluster:${process.pid}:`;
    beforeAll(async () => {
      if (client.status !== 'ready') await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
    }, 30_000);
    afterAll(async () => {
      client.disconnect();
      await cluster.stop();
    }, 30_000);

    it('talks to three masters', () => {
      expect(client.isCluster).toBe(true);
      expect(client.nodes('master')).toHaveLength(3);
    });

    limiterContract('redis cluster', () => new RedisRateLimiter(client, { prefix }), { propertyRuns: 50 });
    quotaContract('redis cluster', (seed) => new RedisQuotaCounter(client, seed, { prefix }));
    stateStoreContract('redis cluster', () => ({ store: new RedisStateStore(client, { prefix }) }));

    let n = 0;
    it.each(loadScenarios())('$name as one pipelined batch: same alerts as one by one', ({ scenario }) =>
      sameAsOneByOne(scenario, () => new RedisStateStore(client, { prefix: `${prefix}scenario${n++}:` })),
    );

    it('a service process with VIGIL_REDIS_CLUSTER=on keeps its limits and detection state on the cluster', async () => {
      const servicePrefix = `${prefix}service:`;
      const service = await startService(tempDir('vigil-cluster-service-'), {
        VIGIL_REDIS_URL: cluster.url,
        VIGIL_REDIS_CLUSTER: 'on',
        VIGIL_REDIS_PREFIX: servicePrefix,
      });
      try {
        const { key } = await provision(service.base, 'pro');
        const events = Array.from({ length: 12 }, (_, i) => ({ event: 'auth.login.failure', actor_id: 'victim', ip: `203.0.113.${i}` }));
        const res = await api(service.base, 'POST', '/v1/events/batch', key, { events });
        expect(res.status).toBe(202);
        const results = res.json.results as { degraded?: boolean; alerts?: { type: string }[] }[];
        expect(results.map((r) => (r.alerts ?? []).some((a) => a.type === 'auth.brute_force.account'))).toEqual([...Array(9).fill(false), true, true, true]);
        expect(results.some((r) => r.degraded)).toBe(false);
        expect((await api(service.base, 'GET', '/readyz', key)).json).toMatchObject({ redis: 'ok' });
        const keys = (await Promise.all(client.nodes('master').map((node) => node.keys(`${servicePrefix}*`)))).flat();
        expect(keys.some((k) => k.startsWith(`${servicePrefix}rl:`))).toBe(true);
        expect(keys.some((k) => k.startsWith(`${servicePrefix}st:`))).toBe(true);
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
      }
    }, 60_000);

    it('opens every master before start-up ends, so the service does not wait out its start-up bound', async () => {
      const fresh = (await openRedis(cluster.url, { cluster: true })) as Cluster;
      try {
        expect(await connectionReady(fresh, 10_000)).toBe(true);
        expect(fresh.nodes('master').map((node) => node.status)).toEqual(['ready', 'ready', 'ready']);
      } finally {
        fresh.disconnect();
      }
    });

    it("runs one record's ops in the order sent while the masters' connections are still opening", async () => {
      // A new client knows the cluster but has opened no master yet: the first runs wait for them.
      const patterns: number[][] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const fresh = (await openRedis(cluster.url, { cluster: true })) as Cluster;
        try {
          await new Promise((resolve) => fresh.once('ready', resolve));
          expect(fresh.nodes('master').some((node) => node.status === 'wait')).toBe(true);
          const store = new RedisStateStore(fresh, { prefix: `${prefix}order${attempt}:` });
          const runs = Array.from({ length: 12 }, (_, i) =>
            store.run([
              { kind: 'window.add', key: 'acc_order|w|actor:victim', field: 'fail', at: 1_000, windowMs: 600_000 },
              { kind: 'window.add', key: `acc_order|w|ip:203.0.113.${i}`, field: 'fail', at: 1_000, windowMs: 600_000 },
            ] as const),
          );
          patterns.push((await Promise.all(runs)).map(([byActor]) => byActor.sum));
        } finally {
          fresh.disconnect();
        }
      }
      const inOrder = Array.from({ length: 12 }, (_, i) => i + 1);
      expect(patterns).toEqual(Array(5).fill(inOrder));
    });

    it('spreads records over the masters (each record on its own slot, not all on one node)', async () => {
      const store = new RedisStateStore(client, { prefix: `${prefix}spread:` });
      await store.run(
        Array.from({ length: 30 }, (_, i) => ({ kind: 'counter.add', key: `acc_t|c|actor:u${i}`, field: 'n', at: 0, amount: 1, ttlMs: 60_000 }) as const),
      );
      const perNode = await Promise.all(client.nodes('master').map((node) => node.keys(`${prefix}spread:*`)));
      expect(perNode.flat()).toHaveLength(30);
      for (const keys of perNode) expect(keys.length).toBeGreaterThan(0);
    });
  });
}
