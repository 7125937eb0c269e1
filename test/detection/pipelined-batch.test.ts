/**
 * A request's events detected as one pipelined batch give exactly what detecting them one after
 * the other gives: every detector scenario replayed as a single batch, against a store that
 * answers later than it runs (as Redis does) and against Redis itself.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { RedisStateStore } from '../../src/redis/state-store.js';
import type { StateOp, StateResult, StateStore } from '../../src/detection/state/state-store.js';
import type { Detection } from '../../src/pipeline/detect.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { asBatch, normalised, oneByOne, sameAsOneByOne } from './batch-replay.js';
import { expand, loadScenarios, type Scenario } from './fixtures.js';

const redis = await connectTestRedis('pipelined-batch');
const scenarios = loadScenarios();

/** Runs ops when sent, answers on a later turn of the event loop, and logs both. */
class LaterAnsweringStore implements StateStore {
  readonly kind = 'redis' as const;
  readonly log: string[] = [];
  constructor(private readonly inner: StateStore = new MemoryStateStore({ sweepIntervalMs: 0 })) {}
  async run<const T extends readonly StateOp[]>(ops: T) {
    this.log.push('send');
    const results = (await this.inner.run(ops)) as StateResult[];
    await new Promise((resolve) => setImmediate(resolve));
    this.log.push('answer');
    return results as never;
  }
  scope = (accountId: string) => this.inner.scope(accountId);
  ping = () => this.inner.ping();
  close = () => this.inner.close();
}

const failures = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'auth.login.failure', actor: 'victim', ip: `203.0.113.${i}`, at: i * 1000 }));
const bruteForce = (d: readonly Detection[]) =>
  d.map((x) =>
    x.alerts
      .filter((a) => a.type === 'auth.brute_force.account')
      .map((a) => (a.opened ? 'opened' : 'updated'))
      .join(),
  );

describe('a batch detected pipelined', () => {
  it.each(scenarios)('$name: same alerts as one by one', ({ scenario }) => sameAsOneByOne(scenario, () => new LaterAnsweringStore()));

  it('sends every first batch before the first answer when no event depends on an earlier one', async () => {
    const store = new LaterAnsweringStore();
    await asBatch(store, failures(9));
    expect(store.log.slice(0, 10)).toEqual([...Array(9).fill('send'), 'answer']);
  });

  it('an email change sees the new-country alert raised by a login earlier in the same batch', async () => {
    const { scenario } = scenarios.find((s) => s.name.includes('change-after-new-country-login')) as { scenario: Scenario };
    const batch = await asBatch(new LaterAnsweringStore(), expand(scenario), scenario.settings);
    expect(batch.at(-1)?.alerts.map((a) => a.type)).toContain('account.change_after_new_login');
  });
});

describeWithRedis('a batch detected pipelined on Redis', redis, (r) => {
  let n = 0;
  const store = () => new RedisStateStore(r.client, { prefix: `${r.prefix}${n++}:` });

  it('10 login failures of one actor in one batch raise brute force at the 10th, as one by one', async () => {
    const expected = await oneByOne(store(), failures(12));
    expect(bruteForce(expected)).toEqual([...Array(9).fill(''), 'opened', 'updated', 'updated']);
    const batch = await asBatch(store(), failures(12));
    expect(bruteForce(batch)).toEqual(bruteForce(expected));
    expect(normalised(batch)).toBe(normalised(expected));
  });

  it.each(scenarios)('$name: same alerts as one by one', ({ scenario }) => sameAsOneByOne(scenario, store));
});
