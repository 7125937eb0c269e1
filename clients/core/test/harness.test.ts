import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VigilClient } from '../src/index.js';
import { FakeClock, mismatch, replay, type Scenario } from './harness.js';
import { loadScenarios, startScriptedServer, type Running } from './processes.js';

describe('conformance harness', () => {
  it('matches objects by subset, arrays by length and order, scalars exactly', () => {
    const ids = new Map<string, string>();
    expect(mismatch({ a: 1 }, { a: 1, b: 2 }, 'x', ids)).toBeNull();
    expect(mismatch({ a: 1 }, { a: 2 }, 'x', ids)).toBe('x.a: expected 1, got 2');
    expect(mismatch([1, 2], [1, 2, 3], 'x', ids)).toMatch(/expected 2 items, got 3/);
    expect(mismatch(null, 0, 'x', ids)).toMatch(/expected null/);
    expect(mismatch('<any>', undefined, 'x', ids)).toMatch(/missing/);
  });

  it('binds <id:NAME>: the same name must repeat the same id, another name a new one', () => {
    const ids = new Map<string, string>();
    expect(mismatch('<id:a>', 'one', 'x', ids)).toBeNull();
    expect(mismatch('<id:a>', 'one', 'x', ids)).toBeNull();
    expect(mismatch('<id:a>', 'two', 'x', ids)).toMatch(/bound to a/);
    expect(mismatch('<id:b>', 'one', 'x', ids)).toMatch(/already bound to a/);
    expect(mismatch('<id:b>', '', 'x', ids)).toMatch(/expected an id/);
  });

  it('the fake clock runs due timers in order and only those', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.setTimer(() => fired.push('b'), 200);
    clock.setTimer(() => fired.push('a'), 100);
    const cancel = clock.setTimer(() => fired.push('cancelled'), 150);
    cancel();
    clock.advance(199);
    expect(fired).toEqual(['a']);
    clock.advance(1);
    expect(fired).toEqual(['a', 'b']);
  });

  describe('against the scripted server', () => {
    let server: Running<{ port: number }>;
    beforeAll(async () => {
      server = await startScriptedServer();
    });
    afterAll(() => server.stop());
    const url = () => `http://127.0.0.1:${server.info.port}`;

    // A scenario edited to expect something else must fail, or passing proves nothing.
    it.each([
      ['one request too many', (s: Scenario) => (s.steps[2]!.requests as unknown[]).push({ method: 'POST', path: '/v1/events' })],
      ['another risk decision', (s: Scenario) => ((s.steps[3]!.result as { risk: { action: string } }).risk.action = 'allow')],
      ['another stat', (s: Scenario) => ((s.steps[4]!.stats as { accepted: number }).accepted = 2)],
    ])('fails a scenario that expects %s', async (_label, edit) => {
      const scenario = structuredClone(loadScenarios().find((s) => s.name === 'single-event-accepted')!);
      edit(scenario);
      await expect(replay(scenario, url(), (o) => new VigilClient(o))).rejects.toThrow(/single-event-accepted step/);
    });

    it('fails a client that leaves the cooldown too early', async () => {
      const scenario = loadScenarios().find((s) => s.name === 'first-429-enters-cooldown')!;
      await expect(replay(scenario, url(), (o) => new VigilClient(o))).resolves.toBeUndefined();
      // A clock that jumps an hour and more at every reading ends the cooldown at once: the next event goes out.
      let t = 0;
      const hasty = (o: ConstructorParameters<typeof VigilClient>[0]) =>
        new VigilClient({ ...o, clock: { now: () => (t += 4_000_000), setTimer: () => () => {} } });
      await expect(replay(scenario, url(), hasty)).rejects.toThrow(/first-429-enters-cooldown step/);
    });
  });
});
