import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { SCALE_OUT, bearer, testApp } from '../helpers/app.js';
import { postEvent } from './support.js';

/** The value of an unlabelled Prometheus sample line `name value`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('/metrics: the in-process detection state', () => {
  it('shows its estimated bytes, growing with the actors detection keeps state for, and its evictions', async () => {
    const t = await testApp();
    closers.push(() => t.close());
    const key = (await t.account('pro')).secret;
    const read = async () => (await t.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
    const before = await read();
    expect(before).toContain('# TYPE vigil_state_store_bytes gauge');
    expect(before).toContain('# TYPE vigil_state_store_evictions_total counter');
    for (let i = 0; i < 20; i++)
      expect((await postEvent(t, key, { event: 'auth.login.failure', actor_id: `user-${i}`, ip: `198.51.100.${i + 1}` })).statusCode).toBe(202);
    const after = await read();
    expect(sample(after, 'vigil_state_store_evictions_total')).toBe(0);
    // Scaled out, the state is in Redis: the in-process stand-in holds nothing while Redis answers.
    if (SCALE_OUT) expect(sample(after, 'vigil_state_store_bytes')).toBe(0);
    else expect(sample(after, 'vigil_state_store_bytes')).toBeGreaterThan((sample(before, 'vigil_state_store_bytes') as number) + 20 * 200);
  });

  it('counts what a store at its byte budget evicts, and its bytes stay within the budget', async () => {
    const base = await testApp();
    closers.push(() => base.close());
    const budget = 64 * 1024;
    const state = new MemoryStateStore({ clock: base.clock, maxBytes: budget, sweepIntervalMs: 0 });
    closers.push(() => state.close());
    const vigil = await buildApp({ ...base.services, state });
    closers.push(() => vigil.close());
    const account = await vigil.accounts.create('bound', 'business');
    if (!account.ok) throw new Error(account.message);
    const key = await vigil.accounts.createKey(account.value.id, 'secret');
    if (!key.ok) throw new Error(key.message);
    for (let batch = 0; batch < 5; batch++) {
      base.clock.advance(5_000);
      const events = Array.from({ length: 100 }, (_, i) => ({
        event: 'auth.login.failure',
        actor_id: `actor-${batch * 100 + i}`,
        ip: `198.51.${batch}.${i + 1}`,
      }));
      const res = await vigil.app.inject({ method: 'POST', url: '/v1/events/batch', headers: bearer(key.value.key), payload: { events } });
      expect(res.statusCode).toBe(202);
    }
    const text = (await vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, 'vigil_state_store_bytes')).toBe(state.bytes);
    expect(state.bytes).toBeLessThanOrEqual(budget);
    expect(state.evictions).toBeGreaterThan(0);
    expect(sample(text, 'vigil_state_store_evictions_total')).toBe(state.evictions);
  });
});
