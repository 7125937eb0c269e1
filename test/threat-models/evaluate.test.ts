/** evaluate.ts on real compiled models and a real state store: what fires, when, for whom, and once. */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { compileModel, type CompiledModel } from '../../src/threat-models/compile.js';
import { evaluateModels, THREAT_MODEL_DETECTOR } from '../../src/threat-models/evaluate.js';
import { EventView } from '../../src/threat-models/event-view.js';
import { validateModel } from '../../src/threat-models/validate.js';
import { ManualClock } from '../../src/util/clock.js';
import { MINUTE_MS, SECOND_MS } from '../../src/util/duration.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

function model(id: string, body: Record<string, unknown>): CompiledModel {
  const checked = validateModel(Object.assign({ name: id, outcome: { alert: `custom.${id}`, severity: 'medium', tags: ['t1'] } }, body));
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return compileModel(id, 1, checked.value);
}

const event = (type: string, at: number, doc: Record<string, unknown> = {}) => ({ view: new EventView(type, at, Object.assign({ event: type }, doc)) });

/** Runs the models over the events one request each (as separate requests arrive), answering the alert types per event. */
async function alertsPerEvent(models: CompiledModel[], events: ReturnType<typeof event>[], state = new MemoryStateStore()): Promise<string[][]> {
  const out: string[][] = [];
  for (const e of events) {
    const [detection] = await evaluateModels(state, new ManualClock(e.view.at), 'acc_eval', models, [e]);
    out.push((detection?.alerts ?? []).map((a) => `${a.type}@${a.subject}${a.opened ? '' : ' (again)'}`));
  }
  return out;
}

describe('evaluateModels', () => {
  it('fires a single-event model with its outcome, points, tags and subject, and answers nothing for other types', async () => {
    const m = model('admin_export', { match: { event: 'custom.export.*', where: { field: 'metadata.role', op: 'equals', value: 'admin' } } });
    const [hit, miss, other] = await evaluateModels(
      new MemoryStateStore(),
      new ManualClock(T0),
      'acc_eval',
      [m],
      [
        event('custom.export.csv', T0, { actor_id: 'u1', metadata: { role: 'admin' } }),
        event('custom.export.csv', T0, { actor_id: 'u1', metadata: { role: 'user' } }),
        event('auth.login.success', T0, { actor_id: 'u1', metadata: { role: 'admin' } }),
      ],
    );
    expect(hit?.alerts).toEqual([
      expect.objectContaining({
        type: 'custom.admin_export',
        severity: 'medium',
        subject: 'actor:u1',
        opened: true,
        detector: THREAT_MODEL_DETECTOR,
        points: 20,
        tags: ['t1'],
      }),
    ]);
    expect(hit?.writes[0]?.alert).toMatchObject({ accountId: 'acc_eval', actorId: 'u1', details: { threat_model: { id: 'admin_export', version: 1 } } });
    expect(miss?.alerts).toEqual([]);
    expect(other?.alerts).toEqual([]);
  });

  it('counts a threshold per group within its window in event time', async () => {
    const m = model('otp', { match: { event: 'custom.otp.fail' }, threshold: { count: 3, window_seconds: 60, group_by: 'actor_id' } });
    const at = (s: number, actor: string) => event('custom.otp.fail', T0 + s * SECOND_MS, { actor_id: actor });
    expect(await alertsPerEvent([m], [at(0, 'a'), at(1, 'b'), at(2, 'a'), at(3, 'b'), at(4, 'a'), at(90, 'b')])).toEqual([
      [],
      [],
      [],
      [],
      ['custom.otp@actor:a'],
      // b's first two fell out of the window: one in 60 s is not three.
      [],
    ]);
  });

  it('deduplicates a repeated firing into the open alert', async () => {
    const m = model('root', { match: { event: 'custom.x', where: { field: 'actor_id', op: 'equals', value: 'root' } } });
    const e = (s: number) => event('custom.x', T0 + s * SECOND_MS, { actor_id: 'root' });
    expect(await alertsPerEvent([m], [e(0), e(10)])).toEqual([['custom.root@actor:root'], ['custom.root@actor:root (again)']]);
  });

  it('counts distinct values, and fires an ordered sequence only in order within its window', async () => {
    const spray = model('spray', {
      match: { event: 'auth.login.failure' },
      threshold: { count: 3, window_seconds: 300, distinct: 'actor_id', group_by: 'ip' },
    });
    const fail = (s: number, actor: string) => event('auth.login.failure', T0 + s * SECOND_MS, { actor_id: actor, ip: '203.0.113.9' });
    expect(await alertsPerEvent([spray], [fail(0, 'a'), fail(1, 'a'), fail(2, 'b'), fail(3, 'c')])).toEqual([[], [], [], ['custom.spray@ip:203.0.113.9']]);

    const chain = model('chain', {
      match: { event: 'auth.mfa.disabled' },
      sequence: { then: [{ event: 'custom.export.csv' }], window_seconds: 600, group_by: 'actor_id' },
    });
    const step = (type: string, ms: number) => event(type, T0 + ms, { actor_id: 'u9' });
    expect(await alertsPerEvent([chain], [step('custom.export.csv', 0), step('auth.mfa.disabled', MINUTE_MS)])).toEqual([[], []]);
    expect(await alertsPerEvent([chain], [step('auth.mfa.disabled', 0), step('custom.export.csv', MINUTE_MS)])).toEqual([[], ['custom.chain@actor:u9']]);
    expect(await alertsPerEvent([chain], [step('auth.mfa.disabled', 0), step('custom.export.csv', 11 * MINUTE_MS)])).toEqual([[], []]);
  });

  it('sees the earlier events of the same request, in order', async () => {
    const m = model('burst', { match: { event: 'custom.b' }, threshold: { count: 2, window_seconds: 60 } });
    const detections = await evaluateModels(new MemoryStateStore(), new ManualClock(T0), 'acc_eval', [m], [event('custom.b', T0), event('custom.b', T0 + 1)]);
    expect(detections.map((d) => d.alerts.length)).toEqual([0, 1]);
  });

  it('keeps the state of each account apart', async () => {
    const m = model('pair', { match: { event: 'custom.p' }, threshold: { count: 2, window_seconds: 60 } });
    const state = new MemoryStateStore();
    const once = (account: string) => evaluateModels(state, new ManualClock(T0), account, [m], [event('custom.p', T0)]);
    await once('acc_one');
    expect((await once('acc_two'))[0]?.alerts).toEqual([]);
    expect((await once('acc_one'))[0]?.alerts).toHaveLength(1);
  });
});
