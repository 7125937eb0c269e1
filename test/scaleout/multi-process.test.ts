/**
 * Two service processes on two ports, sharing one PostgreSQL schema and one Redis prefix, behave
 * as one service: one key's traffic alternates between them, and its per-minute limit,
 * its monthly quota and brute-force detection all hold jointly. Real child processes (no shared
 * memory, no shared clock), so anything kept per process would show here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectTestRedis, describeWithRedis, REDIS_URL } from '../limits/redis-helper.js';
import { api, provision, startService, tempDir, type Service } from '../process/service.js';
import { unscopedKeys } from '../helpers/redis-keys.js';
import { adminPool, describePostgres, dropSchema, freshSchema, schemaUrl } from '../storage/pg-helpers.js';

const redis = await connectTestRedis('multi-process');

/** `tight`: 20 events a minute; `capped`: 12 events a month, then dropped (as Free); per-second limits out of the way. */
function plans(dir: string): string {
  const file = join(dir, 'plans.json');
  const roomy = { eps: 100_000, batch_max: 0 };
  writeFileSync(
    file,
    JSON.stringify({
      plans: {
        tight: { ...roomy, rpm: 20, monthly_cap: 100_000 },
        capped: { ...roomy, rpm: 100_000, monthly_cap: 12, overage: 'drop' },
        pro: { eps: 100_000 },
      },
    }),
  );
  return file;
}

describePostgres('two service processes, one service', () => {
  describeWithRedis('shared PostgreSQL schema + Redis prefix', redis, (r) => {
    const schema = freshSchema();
    const services: Service[] = [];
    const post = (n: number, key: string, body: object) => api((services[n % 2] as Service).base, 'POST', '/v1/events', key, body);

    beforeAll(async () => {
      const dir = tempDir('vigil-multi-process-');
      const env = {
        VIGIL_DASHBOARD_KEY_SIGN_IN: 'on',
        VIGIL_DATABASE_URL: schemaUrl(schema),
        VIGIL_REDIS_URL: REDIS_URL,
        VIGIL_REDIS_PREFIX: r.prefix,
        VIGIL_PLANS_FILE: plans(dir),
      };
      // One after the other: the second migrates a schema the first already created.
      for (const name of ['a', 'b']) services.push(await startService(tempDir(`vigil-multi-process-${name}-`), env));
      expect(new Set(services.map((s) => s.base)).size).toBe(2);
    }, 120_000);

    afterAll(async () => {
      for (const s of services) s.child.kill('SIGTERM');
      await Promise.all(services.map((s) => s.exited));
      const admin = adminPool();
      await dropSchema(admin, schema).finally(() => admin.end());
    }, 60_000);

    it('the per-minute limit holds across both processes: 20 of 30 alternating requests accepted, the rest 429', async () => {
      const { key } = await provision(services[0]!.base, 'tight');
      const statuses: number[] = [];
      for (let n = 0; n < 30; n++) statuses.push((await post(n, key, { event: 'app.ping', actor_id: `u${n}` })).status);
      expect(statuses.slice(0, 20)).toEqual(Array(20).fill(202));
      expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    });

    it('the monthly quota is shared: the 13th event of the month is dropped whichever process takes it', async () => {
      const { key } = await provision(services[1]!.base, 'capped');
      const statuses: string[] = [];
      for (let n = 0; n < 16; n++) {
        const res = await post(n, key, { event: 'app.ping', actor_id: `v${n}` });
        expect(res.status).toBe(202);
        statuses.push(res.json.status);
      }
      expect(statuses).toEqual([...Array(12).fill('accepted'), ...Array(4).fill('dropped')]);
      for (const s of services) expect((await api(s.base, 'GET', '/v1/usage', key)).json).toMatchObject({ used: 12, cap: 12, remaining: 0, dropped: 4 });
      expect((await api(services[0]!.base, 'GET', '/v1/events?limit=100', key)).json.data).toHaveLength(12);
    });

    it('login failures alternating between the processes raise one brute-force alert counting them all', async () => {
      const { key } = await provision(services[0]!.base, 'pro');
      const raised: string[][] = [];
      for (let n = 0; n < 14; n++) {
        const res = await post(n, key, { event: 'auth.login.failure', actor_id: 'victim', ip: `203.0.113.${n}` });
        expect(res.status).toBe(202);
        raised.push(((res.json.alerts ?? []) as { type: string; id: string }[]).filter((a) => a.type === 'auth.brute_force.account').map((a) => a.id));
      }
      // Neither process alone saw 10 failures (each saw 7); together they did, from the 10th on.
      expect(raised.slice(0, 9).flat()).toEqual([]);
      const ids = new Set(raised.slice(9).flat());
      expect(raised.slice(9).every((x) => x.length === 1)).toBe(true);
      expect(ids.size).toBe(1);
      for (const s of services) {
        const list = (await api(s.base, 'GET', '/v1/alerts?type=auth.brute_force.account', key)).json.data as { id: string; count: number }[];
        expect(list).toHaveLength(1);
        expect(list[0]).toMatchObject({ id: [...ids][0], count: 5 }); // opened by the 10th failure, updated by the 11th to 14th
      }
    });
    it('two accounts reusing one actor and address across both processes: no alert crosses, every key is account-scoped', async () => {
      const a = await provision(services[0]!.base, 'pro');
      const b = await provision(services[1]!.base, 'pro');
      const failure = { event: 'auth.login.failure', actor_id: 'shared-alice', ip: '198.51.100.7' };
      for (let n = 0; n < 6; n++) expect((await post(n, a.key, failure)).status).toBe(202);
      const inB: string[][] = [];
      for (let n = 0; n < 6; n++) inB.push((((await post(n, b.key, failure)).json.alerts ?? []) as { type: string }[]).map((x) => x.type));
      expect(inB).toEqual(Array(6).fill([]));
      expect((await api(services[0]!.base, 'GET', '/v1/alerts', b.key)).json.data).toEqual([]);
      expect(await unscopedKeys(r.client, r.prefix)).toEqual([]);
    });
    it('a dashboard session opened on one process is honoured, CSRF-checked and ended on the other', async () => {
      const { key } = await provision(services[0]!.base, 'pro');
      const [a, b] = services as [Service, Service];
      const signIn = await fetch(`${a.base}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      });
      expect(signIn.status).toBe(201);
      const cookie = `vigil_session=${/vigil_session=([^;]*)/.exec(signIn.headers.get('set-cookie') ?? '')?.[1] ?? ''}`;
      const csrf = ((await signIn.json()) as { csrf_token: string }).csrf_token;
      expect((await fetch(`${b.base}/v1/usage`, { headers: { cookie } })).status).toBe(200);
      const patch = (headers: Record<string, string>) =>
        fetch(`${b.base}/v1/settings`, { method: 'PATCH', headers: { cookie, 'content-type': 'application/json', ...headers }, body: '{"risk":{"block":90}}' });
      expect((await patch({})).status).toBe(403);
      expect((await patch({ 'x-csrf-token': csrf })).status).toBe(200);
      expect((await fetch(`${b.base}/dashboard/api/session`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status).toBe(204);
      expect((await fetch(`${a.base}/v1/usage`, { headers: { cookie } })).status).toBe(401);
    });
  });
});
