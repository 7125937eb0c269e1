/**
 * An ingestion request reads all of its account's stamps (keys, suppression list, threat models)
 * in one batch of the state store: one round trip to Redis in scale-out mode, however many caches
 * the request consults. The app under test runs on the test app's backends through a state store
 * that records every batch it is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type VigilApp } from '../../src/app.js';
import type { AccountScope } from '../../src/event/tenancy.js';
import type { ResultsOf, StateOp, StateResult, StateStore } from '../../src/detection/state/state-store.js';
import { ThreatModelRegistry } from '../../src/threat-models/registry.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp } from './support.js';

/** Forwards every batch to the store it wraps and records it. */
class RecordingStateStore implements StateStore {
  readonly kind: StateStore['kind'];
  readonly batches: (readonly StateOp[])[] = [];
  readonly runSync?: (ops: readonly StateOp[]) => StateResult[];

  constructor(private readonly inner: StateStore) {
    this.kind = inner.kind;
    const runSync = inner.runSync?.bind(inner);
    if (runSync !== undefined)
      this.runSync = (ops) => {
        this.batches.push(ops);
        return runSync(ops);
      };
  }

  scope(accountId: string): AccountScope {
    return this.inner.scope(accountId);
  }

  run<const T extends readonly StateOp[]>(ops: T): Promise<ResultsOf<T>> {
    this.batches.push(ops);
    return this.inner.run(ops);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const isStampRead = (op: StateOp): boolean => op.kind === 'last.swap' && op.field === 'stamp' && op.value === undefined;

describe('stamps: one read per request', () => {
  let t: TestApp;
  let vigil: VigilApp;
  let state: RecordingStateStore;
  let key: string;

  beforeAll(async () => {
    // A pseudonym secret turns the suppression list on; the pro plan runs threat models.
    t = await roomyApp({ VIGIL_PSEUDONYM_SECRET: 'a-master-secret-of-at-least-32-characters' });
    state = new RecordingStateStore(t.services.state);
    const threatModels = new ThreatModelRegistry(t.services.store.threatModels, state);
    vigil = await buildApp(Object.assign({}, t.services, { state, threatModels }));
    key = (await t.account('pro')).secret;
  }, 60_000);
  afterAll(async () => {
    await vigil?.close();
    await t?.close();
  });

  /** The stamp-reading batches one single event costs. */
  async function stampBatches(n: number): Promise<(readonly StateOp[])[]> {
    const from = state.batches.length;
    const event = { event: 'auth.login', actor_id: `stamp-reader-${n}`, ip: '203.0.113.7' };
    const res = await vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: event });
    expect(res.statusCode, res.body).toBe(202);
    return state.batches.slice(from).filter((batch) => batch.some(isStampRead));
  }

  it('reads the keys, suppression list and threat models stamps in one batch, on a key first seen and on a cached one', async () => {
    for (let n = 0; n < 3; n++) {
      const batches = await stampBatches(n);
      expect(batches).toHaveLength(1);
      const keys = (batches[0] as readonly StateOp[]).filter(isStampRead).map((op) => op.key);
      expect(keys).toHaveLength(3);
      expect(keys.map((k) => k.slice(k.indexOf('|') + 1)).sort()).toEqual(['keys|stamp', 'suppressions|stamp', 'threat-models|stamp']);
    }
  });
});
