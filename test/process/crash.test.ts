import { afterEach, describe, expect, it } from 'vitest';
import { provision, sendTraffic, startService, storedEvents, tempDir, type Service } from './service.js';

/** Durability of the 202: the service is killed while a client sends events, then restarted. */
describe('crash and shutdown', () => {
  const running: Service[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });

  async function start(dir: string): Promise<Service> {
    const s = await startService(dir);
    running.push(s);
    return s;
  }

  it('SIGKILL mid-stream: after restart every event that got a 202 is stored, once', { timeout: 180_000 }, async () => {
    const dir = tempDir('vigil-crash-');
    const first = await start(dir);
    // First start on an empty database prints the first account's keys once.
    expect(first.lines.join('\n')).toMatch(/secret key:\s+vgl_sk_[0-9A-Za-z]{32}/);
    const { key } = await provision(first.base, 'business');

    const traffic = sendTraffic(first.base, key);
    await traffic.whenAcked(400);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await traffic.done;
    const acked = new Map(traffic.acked);
    expect(acked.size).toBeGreaterThanOrEqual(400);

    const second = await start(dir);
    expect(second.lines.join('\n')).not.toMatch(/secret key:/);
    const stored = await storedEvents(second.base, key);
    const missing = [...acked.keys()].filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
    for (const [id, eventId] of acked) expect(stored.get(id)).toBe(eventId);
    // No event_id stored twice.
    expect(new Set(stored.values()).size).toBe(stored.size);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('SIGTERM during traffic: drains, flushes, exits 0, and every 202 is stored', { timeout: 180_000 }, async () => {
    const dir = tempDir('vigil-term-');
    const first = await start(dir);
    const { key } = await provision(first.base, 'business');

    const traffic = sendTraffic(first.base, key);
    await traffic.whenAcked(300);
    first.child.kill('SIGTERM');
    const code = await first.exited;
    traffic.stop();
    await traffic.done;
    expect({ code, stderr: first.stderr }).toEqual({ code: 0, stderr: [] });
    expect(first.lines.join('\n')).toContain('shutting down');
    const acked = new Map(traffic.acked);

    const second = await start(dir);
    const stored = await storedEvents(second.base, key);
    expect([...acked.keys()].filter((id) => !stored.has(id))).toEqual([]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
