import { describe, expect, it } from 'vitest';
import { T0, alertRow, batch, eventRow } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of StatsStore. */
export function statsContract(sut: StoreContext): void {
  describe('overview', () => {
    it('overview: counts per bucket since the start, open alerts by severity, top actors and addresses, open kill chains; one account only', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const HOUR = 3_600_000;
      const events = [
        eventRow('acc_a', { receivedAt: T0 - 5 * HOUR, actorId: 'old', riskScore: 99 }),
        eventRow('acc_a', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 70 }),
        eventRow('acc_a', { receivedAt: T0 + 10, actorId: 'alice', ip: '198.51.100.1', riskScore: 20 }),
        eventRow('acc_a', { receivedAt: T0 + HOUR + 5, actorId: 'bob', ip: '198.51.100.2', riskScore: 40 }),
        eventRow('acc_a', { receivedAt: T0 + HOUR + 6, actorId: null, ip: null, riskScore: 0 }),
        eventRow('acc_b', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 100 }),
      ];
      const chain = alertRow('acc_a', { type: 'chain.account_takeover', severity: 'critical', firstSeen: T0 + HOUR, lastSeen: T0 + HOUR });
      const closedChain = alertRow('acc_a', { type: 'chain.cover_tracks', severity: 'critical', status: 'resolved', firstSeen: T0, lastSeen: T0 });
      const high = alertRow('acc_a', { severity: 'high', status: 'acknowledged', firstSeen: T0 - 5 * HOUR });
      const other = alertRow('acc_b', { type: 'chain.account_takeover', severity: 'critical' });
      await sut.store.commit(batch({ events, alerts: [chain, closedChain, high, other].map((alert) => ({ alert, opened: true })) }));
      const since = T0 - (T0 % HOUR);
      const o = await sut.store.stats.overview('acc_a', since, HOUR);
      expect(o.events).toEqual([
        { at: since, count: 2 },
        { at: since + HOUR, count: 2 },
      ]);
      expect(o.alerts).toEqual([
        { at: since, count: 1 },
        { at: since + HOUR, count: 1 },
      ]);
      expect(o.openBySeverity).toEqual({ critical: 1, high: 1 });
      expect(o.topActors).toEqual([
        { value: 'alice', count: 2, maxRisk: 70 },
        { value: 'bob', count: 1, maxRisk: 40 },
      ]);
      expect(o.topIps).toEqual([
        { value: '198.51.100.1', count: 2, maxRisk: 70 },
        { value: '198.51.100.2', count: 1, maxRisk: 40 },
      ]);
      expect(o.chains.map((c) => c.id)).toEqual([chain.id]);
      expect(await sut.store.stats.overview('acc_none', since, HOUR)).toEqual({
        events: [],
        alerts: [],
        openBySeverity: {},
        topActors: [],
        topIps: [],
        chains: [],
      });
    });
  });
}
