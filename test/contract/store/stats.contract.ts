import { describe, expect, it } from 'vitest';
import { T0, alertRow, batch, eventRow } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of StatsStore. */
export function statsContract(sut: StoreContext): void {
  describe('overview', () => {
    it('overview: counts per bucket of event time since the start, open alerts by severity, the riskiest actors and addresses, open kill chains; one account only', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const HOUR = 3_600_000;
      const events = [
        eventRow('acc_a', { occurredAt: T0 - 5 * HOUR, receivedAt: T0 - 5 * HOUR, actorId: 'old', riskScore: 99 }),
        // Arrived within the range, happened before it.
        eventRow('acc_a', { occurredAt: T0 - 2 * HOUR, receivedAt: T0 + HOUR, actorId: 'late', riskScore: 98 }),
        eventRow('acc_a', { occurredAt: T0, receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 70 }),
        eventRow('acc_a', { occurredAt: T0 + 10, receivedAt: T0 + 10, actorId: 'alice', ip: '198.51.100.1', riskScore: 20 }),
        eventRow('acc_a', { occurredAt: T0 + HOUR + 5, receivedAt: T0 + HOUR + 5, actorId: 'bob', ip: '198.51.100.2', riskScore: 40 }),
        eventRow('acc_a', { occurredAt: T0 + HOUR + 6, receivedAt: T0 + HOUR + 6, actorId: null, ip: null, riskScore: 0 }),
        // Backfilled: arrived in the second hour, happened in the first.
        eventRow('acc_a', { occurredAt: T0 + 20, receivedAt: T0 + HOUR + 7, actorId: 'bob', ip: '198.51.100.2', riskScore: 10 }),
        // Busier than anyone, never risky: ranked last.
        ...[1, 2, 3, 4].map((i) =>
          eventRow('acc_a', { occurredAt: T0 + HOUR + 10 + i, receivedAt: T0 + HOUR + 10 + i, actorId: 'svc', ip: '10.0.0.5', riskScore: 1 }),
        ),
        eventRow('acc_b', { occurredAt: T0, receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 100 }),
      ];
      const chain = alertRow('acc_a', { type: 'chain.account_takeover', severity: 'critical', firstSeen: T0 + HOUR, lastSeen: T0 + HOUR, actorId: 'bob' });
      const onAddress = alertRow('acc_a', { type: 'network.blocklisted_ip', severity: 'high', status: 'resolved', subject: 'ip:198.51.100.2', actorId: 'bob' });
      const closedChain = alertRow('acc_a', { type: 'chain.cover_tracks', severity: 'critical', status: 'resolved', firstSeen: T0, lastSeen: T0 });
      const high = alertRow('acc_a', { severity: 'high', status: 'acknowledged', firstSeen: T0 - 5 * HOUR });
      const other = alertRow('acc_b', { type: 'chain.account_takeover', severity: 'critical' });
      await sut.store.commit(batch({ events, alerts: [chain, closedChain, high, onAddress, other].map((alert) => ({ alert, opened: true })) }));
      const since = T0 - (T0 % HOUR);
      const o = await sut.store.stats.overview('acc_a', since, HOUR);
      expect(o.events).toEqual([
        { at: since, count: 3 },
        { at: since + HOUR, count: 6 },
      ]);
      expect(o.alerts).toEqual([
        { at: since, count: 2 },
        { at: since + HOUR, count: 1 },
      ]);
      expect(o.openBySeverity).toEqual({ critical: 1, high: 1 });
      expect(o.topActors).toEqual([
        { value: 'alice', count: 2, maxRisk: 70, alerts: 0 },
        { value: 'bob', count: 2, maxRisk: 40, alerts: 2 },
        { value: 'svc', count: 4, maxRisk: 1, alerts: 0 },
      ]);
      expect(o.topIps).toEqual([
        { value: '198.51.100.1', count: 2, maxRisk: 70, alerts: 0 },
        { value: '198.51.100.2', count: 2, maxRisk: 40, alerts: 1 },
        { value: '10.0.0.5', count: 4, maxRisk: 1, alerts: 0 },
      ]);
      expect(o.chains.map((c) => c.id)).toEqual([chain.id]);
      expect(await sut.store.stats.overview('acc_none', since, HOUR)).toEqual({
        events: [],
        alerts: [],
        openBySeverity: {},
        topActors: [],
        topIps: [],
        chains: [],
        eventsCapped: false,
      });
      expect(o.eventsCapped).toBe(false);
      // Bounded: the newest events by arrival only (the four of svc), and it says so.
      const capped = await sut.store.stats.overview('acc_a', since, HOUR, 4);
      expect(capped.events).toEqual([{ at: since + HOUR, count: 4 }]);
      expect(capped.topActors).toEqual([{ value: 'svc', count: 4, maxRisk: 1, alerts: 0 }]);
      expect(capped.eventsCapped).toBe(true);
      expect(capped.openBySeverity).toEqual(o.openBySeverity);
    });
  });
}
