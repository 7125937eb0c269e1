/**
 * Contract of RateLimiter and QuotaCounter, run against every implementation (memory,
 * Redis). Time is the `now` argument, so nothing sleeps. T0 sits on a whole second.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KeyLimits, LimitDecision, QuotaCounter, RateLimiter, UsageSeed, WindowStatus } from '../../src/limits/types.js';
import { monthOf } from '../../src/limits/types.js';

export const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const T0s = T0 / 1000;

type Factory<T> = () => T | Promise<T>;

export interface LimiterContractOptions {
  /** fast-check runs of the sliding-window property (slower backends run fewer). */
  readonly propertyRuns?: number;
}

/** The per-minute (or address) window of a status, without the key's per-second window. */
function minuteOf({ second: _second, ...minute }: WindowStatus): WindowStatus {
  return minute;
}

function rejection(d: LimitDecision): Extract<LimitDecision, { allowed: false }> {
  expect(d.allowed).toBe(false);
  return d as Extract<LimitDecision, { allowed: false }>;
}

export function limiterContract(name: string, factory: Factory<RateLimiter>, options: LimiterContractOptions = {}): void {
  describe(`RateLimiter contract: ${name}`, () => {
    let limiter: RateLimiter;
    let n = 0;
    /** A key no other test touched (backends may share state across tests). */
    let key: string;
    beforeEach(async () => {
      limiter = await factory();
      key = `key-${++n}-${Math.random().toString(36).slice(2)}`;
    });
    afterEach(async () => {
      await limiter.close();
    });

    const free: KeyLimits = { rpm: 30, eps: 5 };

    it('accepts up to the RPM in a minute, then rejects with key_minute and Remaining 0', async () => {
      for (let i = 0; i < 30; i++) {
        // 300 ms apart: never more than 4 requests in 1.1 s, inside the per-second window.
        const d = await limiter.consumeKey(key, free, 1, T0 + i * 300);
        expect(d.allowed).toBe(true);
        expect(minuteOf(d.status)).toEqual({ limit: 30, remaining: 29 - i, resetAt: T0s + 61 });
      }
      const r = rejection(await limiter.consumeKey(key, free, 1, T0 + 9_000));
      expect(r.reason).toBe('key_minute');
      expect(minuteOf(r.status)).toEqual({ limit: 30, remaining: 0, resetAt: T0s + 61 });
      expect(r.retryAfter).toBe(52);
    });

    it('counts each event of a batch per minute and the batch as one request per second', async () => {
      const starter: KeyLimits = { rpm: 500, eps: 25 };
      for (let i = 0; i < 10; i++) expect((await limiter.consumeKey(key, starter, 50, T0 + i)).allowed).toBe(true);
      const r = rejection(await limiter.consumeKey(key, starter, 1, T0 + 10));
      expect(r.reason).toBe('key_minute');
      expect((await limiter.peekKey(key, starter, T0 + 10)).remaining).toBe(0);
    });

    it('holds a request per second for 1 s at least and 1.1 s at most', async () => {
      for (let i = 0; i < 5; i++) expect((await limiter.consumeKey(key, free, 1, T0)).allowed).toBe(true);
      const r = rejection(await limiter.consumeKey(key, free, 1, T0 + 1));
      expect(r.reason).toBe('key_second');
      expect(r.retryAfter).toBe(2); // the requests leave at T0 + 1.1 s
      expect(r.status.remaining).toBe(0);
      expect((await limiter.consumeKey(key, free, 1, T0 + 1_000)).allowed).toBe(false);
      expect((await limiter.consumeKey(key, free, 1, T0 + 1_099)).allowed).toBe(false);
      expect((await limiter.consumeKey(key, free, 1, T0 + 1_100)).allowed).toBe(true);
    });

    it('holds an event for 60 s at least and 61 s at most', async () => {
      expect((await limiter.consumeKey(key, { rpm: 3, eps: 10 }, 3, T0 + 400)).allowed).toBe(true);
      for (const at of [T0 + 30_000, T0 + 60_400, T0 + 60_999]) {
        const r = rejection(await limiter.consumeKey(key, { rpm: 3, eps: 10 }, 1, at));
        expect(r.retryAfter).toBe(Math.ceil((T0 + 61_000 - at) / 1000));
      }
      const d = await limiter.consumeKey(key, { rpm: 3, eps: 10 }, 3, T0 + 61_000);
      expect({ ...d, status: minuteOf(d.status) }).toEqual({ allowed: true, status: { limit: 3, remaining: 0, resetAt: T0s + 122 } });
    });

    it('slides: only the oldest events leave, and retryAfter waits for enough of them', async () => {
      const limits: KeyLimits = { rpm: 30, eps: 10 };
      await limiter.consumeKey(key, limits, 10, T0);
      await limiter.consumeKey(key, limits, 20, T0 + 30_000);
      const early = rejection(await limiter.consumeKey(key, limits, 11, T0 + 61_000));
      expect(early.reason).toBe('key_minute');
      expect(early.retryAfter).toBe(30); // 11 more need the 20 of T0+30s to leave at T0+91s
      expect(early.status.resetAt).toBe(T0s + 91);
      const d = await limiter.consumeKey(key, limits, 10, T0 + 61_000);
      expect({ ...d, status: minuteOf(d.status) }).toEqual({ allowed: true, status: { limit: 30, remaining: 0, resetAt: T0s + 91 } });
    });

    it('rejects a request whole: a refused batch consumes neither window', async () => {
      const limits: KeyLimits = { rpm: 10, eps: 2 };
      await limiter.consumeKey(key, limits, 8, T0);
      rejection(await limiter.consumeKey(key, limits, 3, T0 + 1));
      // The refused batch took no events and no request: 2 events and one request fit.
      expect((await limiter.consumeKey(key, limits, 2, T0 + 2)).allowed).toBe(true);
      expect((await limiter.peekKey(key, limits, T0 + 2)).remaining).toBe(0);
    });

    it('refused by the second window, takes no events from the minute window', async () => {
      const limits: KeyLimits = { rpm: 10, eps: 1 };
      await limiter.consumeKey(key, limits, 1, T0);
      expect(rejection(await limiter.consumeKey(key, limits, 5, T0 + 50)).reason).toBe('key_second');
      expect((await limiter.peekKey(key, limits, T0 + 50)).remaining).toBe(9);
    });

    it('when both windows refuse, reports the one that frees later', async () => {
      const limits: KeyLimits = { rpm: 2, eps: 1 };
      await limiter.consumeKey(key, limits, 2, T0);
      const r = rejection(await limiter.consumeKey(key, limits, 1, T0 + 10));
      expect(r.reason).toBe('key_minute');
      expect(r.retryAfter).toBe(61);
    });

    it('a request larger than the limit never fits and is told the window span', async () => {
      const r = rejection(await limiter.consumeKey(key, { rpm: 5, eps: 5 }, 6, T0));
      expect(r.reason).toBe('key_minute');
      expect(r.retryAfter).toBe(60);
      expect((await limiter.peekKey(key, { rpm: 5, eps: 5 }, T0)).remaining).toBe(5);
    });

    it('peekKey counts nothing; an unknown key is empty and resets now', async () => {
      expect(minuteOf(await limiter.peekKey(key, free, T0 + 1_500))).toEqual({ limit: 30, remaining: 30, resetAt: T0s + 2 });
      await limiter.consumeKey(key, free, 4, T0 + 2_500);
      for (let i = 0; i < 3; i++) expect(minuteOf(await limiter.peekKey(key, free, T0 + 3_000))).toEqual({ limit: 30, remaining: 26, resetAt: T0s + 63 });
      expect(minuteOf(await limiter.peekKey(key, free, T0 + 63_000))).toEqual({ limit: 30, remaining: 30, resetAt: T0s + 63 });
    });

    it('reports the per-second window of requests beside the minute window: remaining and the second its oldest request leaves', async () => {
      const limits: KeyLimits = { rpm: 100, eps: 3 };
      expect((await limiter.peekKey(key, limits, T0 + 250)).second).toEqual({ limit: 3, remaining: 3, resetAt: T0s + 1 });
      // A request at 250 ms sits in the 100 ms bucket 2 and leaves at 1.3 s.
      const first = await limiter.consumeKey(key, limits, 10, T0 + 250);
      expect(first.status.second).toEqual({ limit: 3, remaining: 2, resetAt: T0s + 2 });
      await limiter.consumeKey(key, limits, 0, T0 + 900);
      const third = await limiter.consumeKey(key, limits, 1, T0 + 950);
      expect(third.status.second).toEqual({ limit: 3, remaining: 0, resetAt: T0s + 2 });
      // Refused by the second window: the minute window says 0 remaining, the second window what it holds.
      const refused = rejection(await limiter.consumeKey(key, limits, 1, T0 + 1_000));
      expect(refused.reason).toBe('key_second');
      expect(refused.status.remaining).toBe(0);
      expect(refused.status.second).toEqual({ limit: 3, remaining: 0, resetAt: T0s + 2 });
      expect((await limiter.peekKey(key, limits, T0 + 1_300)).second).toEqual({ limit: 3, remaining: 1, resetAt: T0s + 2 });
      expect((await limiter.peekKey(key, limits, T0 + 2_100)).second).toEqual({ limit: 3, remaining: 3, resetAt: T0s + 3 });
      // An address's window has no per-second part.
      expect((await limiter.hitIp(`ip-${key}`, 10, T0)).status.second).toBeUndefined();
    });

    it('resetAt is the second at which the oldest counted event leaves', async () => {
      const limits: KeyLimits = { rpm: 100, eps: 100 };
      await limiter.consumeKey(key, limits, 1, T0 + 200);
      await limiter.consumeKey(key, limits, 1, T0 + 5_300);
      expect((await limiter.peekKey(key, limits, T0 + 10_000)).resetAt).toBe(T0s + 61);
      expect((await limiter.peekKey(key, limits, T0 + 61_000)).resetAt).toBe(T0s + 66);
    });

    it('applies new limits at once (plan change)', async () => {
      await limiter.consumeKey(key, free, 30, T0);
      expect((await limiter.consumeKey(key, free, 1, T0 + 1)).allowed).toBe(false);
      const d = await limiter.consumeKey(key, { rpm: 1_000, eps: 100 }, 1, T0 + 2);
      expect({ ...d, status: minuteOf(d.status) }).toEqual({ allowed: true, status: { limit: 1_000, remaining: 969, resetAt: T0s + 61 } });
      // A downgrade below what is counted reports 0 remaining, never a negative.
      expect((await limiter.peekKey(key, { rpm: 10, eps: 5 }, T0 + 3)).remaining).toBe(0);
    });

    it('keeps keys, addresses and the two namespaces apart', async () => {
      await limiter.consumeKey(key, free, 30, T0);
      expect((await limiter.consumeKey(`${key}-other`, free, 30, T0)).allowed).toBe(true);
      expect((await limiter.hitIp(key, 1, T0)).allowed).toBe(true);
      expect((await limiter.peekKey(key, free, T0)).remaining).toBe(0);
    });

    it('caps requests per source address per minute', async () => {
      const ip = `192.0.2.${n % 250}-${key}`;
      for (let i = 0; i < 600; i++) {
        const d = await limiter.hitIp(ip, 600, T0 + i * 10);
        expect(d.allowed).toBe(true);
        expect(d.status.remaining).toBe(599 - i);
      }
      const r = rejection(await limiter.hitIp(ip, 600, T0 + 6_000));
      expect(r.reason).toBe('ip_minute');
      expect(minuteOf(r.status)).toEqual({ limit: 600, remaining: 0, resetAt: T0s + 61 });
      expect(r.retryAfter).toBe(55);
      expect((await limiter.hitIp(`${ip}-2`, 600, T0 + 6_000)).allowed).toBe(true);
      // The refused hit counted nothing: after the first second's 100 leave, exactly 100 fit.
      for (let i = 0; i < 100; i++) expect((await limiter.hitIp(ip, 600, T0 + 61_000)).allowed).toBe(true);
      expect((await limiter.hitIp(ip, 600, T0 + 61_000)).allowed).toBe(false);
    });

    it('never lets an earlier clock reopen a window (skew between instances)', async () => {
      await limiter.consumeKey(key, free, 30, T0 + 5_000);
      expect((await limiter.consumeKey(key, free, 1, T0)).allowed).toBe(false);
      expect((await limiter.consumeKey(key, free, 1, T0 + 64_000)).allowed).toBe(false);
      expect((await limiter.consumeKey(key, free, 1, T0 + 66_000)).allowed).toBe(true);
    });

    slidingWindowProperty(
      () => limiter,
      factory,
      () => key,
      options.propertyRuns ?? 200,
    );
  });
}

/** One accepted request: when, and how many events. */
interface Accepted {
  readonly t: number;
  readonly events: number;
}

const step = fc.record({
  // Gaps mix bursts (same ms), sub-second spacing and pauses longer than a window.
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 0, max: 70_000 })),
  events: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 25 })),
});

const scenario = fc.record({
  start: fc.integer({ min: 0, max: 86_400_000 }).map((ms) => T0 + ms),
  rpm: fc.integer({ min: 1, max: 60 }),
  eps: fc.integer({ min: 1, max: 8 }),
  steps: fc.array(step, { minLength: 1, maxLength: 150 }),
});

const sumSince = (log: readonly Accepted[], from: number, to: number, weight: (a: Accepted) => number): number => {
  let total = 0;
  for (const a of log) if (a.t >= from && a.t <= to) total += weight(a);
  return total;
};
const eventsOf = (a: Accepted): number => a.events;
const one = (): number => 1;

/**
 * The sliding-window invariant, on random arrival patterns:
 * - safety: in no closed interval of 60 s (1 s), at any real start, are more than RPM
 *   events (eps requests) accepted;
 * - no false 429: a refusal happens only if accepting would exceed the limit counting
 *   the units of the last 61 s (1.1 s), the stated tolerance of one bucket;
 * - Remaining, Reset and Retry-After stay within their definitions, and Retry-After is
 *   tight: at now + retryAfter the refusing window takes the request, one second
 *   earlier it still refuses.
 */
function slidingWindowProperty(limiterOf: () => RateLimiter, factory: Factory<RateLimiter>, keyOf: () => string, numRuns: number): void {
  it(`keeps the sliding-window invariant on random arrival patterns (${numRuns} runs)`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ start, rpm, eps, steps }) => {
        const limiter = limiterOf();
        const key = `${keyOf()}-p${++run}`;
        const limits = { rpm, eps };
        const log: Accepted[] = [];
        let now = start;
        let retryProbes = 3;
        for (const { gap, events } of steps) {
          now += gap;
          const d = await limiter.consumeKey(key, limits, events, now);
          if (d.allowed) {
            log.push({ t: now, events });
            expect(sumSince(log, now - 60_000, now, eventsOf)).toBeLessThanOrEqual(rpm);
            expect(sumSince(log, now - 1_000, now, one)).toBeLessThanOrEqual(eps);
            const countedAtLeast = sumSince(log, now - 60_000, now, eventsOf);
            const countedAtMost = sumSince(log, now - 60_999, now, eventsOf);
            expect(d.status.remaining).toBeLessThanOrEqual(rpm - countedAtLeast);
            expect(d.status.remaining).toBeGreaterThanOrEqual(Math.max(0, rpm - countedAtMost));
            expect(d.status.resetAt * 1000).toBeGreaterThan(now);
            expect(d.status.resetAt * 1000).toBeLessThanOrEqual(now + 61_000);
          } else {
            const minuteFull = sumSince(log, now - 60_999, now, eventsOf) + events > rpm;
            const secondFull = sumSince(log, now - 1_099, now, one) + 1 > eps;
            expect(d.reason === 'key_minute' ? minuteFull : secondFull).toBe(true);
            expect(d.status.remaining).toBe(0);
            expect(Number.isInteger(d.retryAfter) && d.retryAfter >= 1).toBe(true);
            if (events <= rpm && retryProbes-- > 0) await expectTightRetry(factory, key, limits, log, events, now, d);
          }
        }
        // Every closed interval starting at an accepted request (the fullest ones).
        for (const a of log) {
          expect(sumSince(log, a.t, a.t + 60_000, eventsOf)).toBeLessThanOrEqual(rpm);
          expect(sumSince(log, a.t, a.t + 1_000, one)).toBeLessThanOrEqual(eps);
        }
      }),
      { numRuns },
    );
  });
}

let probes = 0;

/**
 * Probes at now + retryAfter and one second before, each on a scratch limiter that
 * replays the accepted history (probes run ahead of the scenario's clock, and a memory
 * limiter would rightly sweep the scenario's key at that later time).
 */
async function expectTightRetry(
  factory: Factory<RateLimiter>,
  key: string,
  limits: KeyLimits,
  log: readonly Accepted[],
  events: number,
  now: number,
  d: Extract<LimitDecision, { allowed: false }>,
): Promise<void> {
  /** A scratch limiter holding the accepted history on a fresh key, probed once at `at`. */
  const probe = async (at: number): Promise<LimitDecision> => {
    const limiter = await factory();
    try {
      const probeKey = `${key}-probe${++probes}`;
      for (const a of log) expect((await limiter.consumeKey(probeKey, limits, a.events, a.t)).allowed).toBe(true);
      return await limiter.consumeKey(probeKey, limits, events, at);
    } finally {
      await limiter.close();
    }
  };
  const atRetry = await probe(now + d.retryAfter * 1000);
  expect(atRetry.allowed || atRetry.reason !== d.reason).toBe(true);
  if (d.retryAfter > 1) expect((await probe(now + (d.retryAfter - 1) * 1000)).allowed).toBe(false);
}

export function quotaContract(name: string, factory: (seed: UsageSeed) => QuotaCounter | Promise<QuotaCounter>): void {
  describe(`QuotaCounter contract: ${name}`, () => {
    let quota: QuotaCounter;
    let seeds: Map<string, { used: number; dropped: number }>;
    let seedCalls: string[];
    let account: string;
    let n = 0;
    const jan = monthOf(Date.UTC(2026, 0, 31, 23, 59, 59, 999));
    const feb = monthOf(Date.UTC(2026, 1, 1, 0, 0, 0, 0));
    const drop = { monthlyCap: 10, overage: 'drop' } as const;
    const bill = { monthlyCap: 10, overage: 'bill' } as const;

    beforeEach(async () => {
      seeds = new Map();
      seedCalls = [];
      account = `acct-${++n}-${Math.random().toString(36).slice(2)}`;
      quota = await factory(async (accountId, period) => {
        seedCalls.push(`${accountId}/${period}`);
        await new Promise((r) => setTimeout(r, 2));
        return { ...(seeds.get(`${accountId}/${period}`) ?? { used: 0, dropped: 0 }) };
      });
    });
    afterEach(async () => {
      await quota.close();
    });

    it('splits the month on UTC calendar boundaries', () => {
      expect(jan).toBe('2026-01');
      expect(feb).toBe('2026-02');
    });

    it("'drop' plans: a batch straddling the cap keeps its first events and drops the rest", async () => {
      expect(await quota.reserve(account, jan, 7, drop)).toEqual({ accepted: 7, dropped: 0 });
      expect(await quota.reserve(account, jan, 5, drop)).toEqual({ accepted: 3, dropped: 2 });
      expect(await quota.reserve(account, jan, 1, drop)).toEqual({ accepted: 0, dropped: 1 });
      expect(await quota.current(account, jan)).toEqual({ used: 10, dropped: 3 });
    });

    it("'bill' plans accept past the cap and count it all as used", async () => {
      expect(await quota.reserve(account, jan, 8, bill)).toEqual({ accepted: 8, dropped: 0 });
      expect(await quota.reserve(account, jan, 50, bill)).toEqual({ accepted: 50, dropped: 0 });
      expect(await quota.current(account, jan)).toEqual({ used: 58, dropped: 0 });
    });

    it('starts a full month afresh at 00:00 UTC on the 1st', async () => {
      await quota.reserve(account, jan, 10, drop);
      expect(await quota.reserve(account, jan, 1, drop)).toEqual({ accepted: 0, dropped: 1 });
      expect(await quota.reserve(account, feb, 1, drop)).toEqual({ accepted: 1, dropped: 0 });
      expect(await quota.current(account, jan)).toEqual({ used: 10, dropped: 1 });
      expect(await quota.current(account, feb)).toEqual({ used: 1, dropped: 0 });
    });

    it('seeds each account-month once from the store, even under concurrent first calls', async () => {
      seeds.set(`${account}/${jan}`, { used: 4, dropped: 2 });
      const decisions = await Promise.all(Array.from({ length: 8 }, () => quota.reserve(account, jan, 1, drop)));
      expect(decisions.reduce((s, d) => s + d.accepted, 0)).toBe(6);
      expect(decisions.reduce((s, d) => s + d.dropped, 0)).toBe(2);
      expect(await quota.current(account, jan)).toEqual({ used: 10, dropped: 4 });
      expect(seedCalls.filter((c) => c === `${account}/${jan}`).length).toBe(1);
    });

    it('release gives a reservation back', async () => {
      await quota.reserve(account, jan, 6, drop);
      const d = await quota.reserve(account, jan, 6, drop);
      expect(d).toEqual({ accepted: 4, dropped: 2 });
      await quota.release(account, jan, d);
      expect(await quota.current(account, jan)).toEqual({ used: 6, dropped: 0 });
      expect(await quota.reserve(account, jan, 4, drop)).toEqual({ accepted: 4, dropped: 0 });
    });

    it('absorb adds signed counts to a month it holds and leaves other months to seeding', async () => {
      if (!quota.absorb) return;
      await quota.reserve(account, jan, 2, drop);
      await quota.absorb(account, jan, { used: 5, dropped: 1 });
      await quota.absorb(account, jan, { used: -1, dropped: 0 });
      expect(await quota.current(account, jan)).toEqual({ used: 6, dropped: 1 });
      seeds.set(`${account}/${feb}`, { used: 9, dropped: 0 });
      await quota.absorb(account, feb, { used: 5, dropped: 0 });
      expect(await quota.current(account, feb)).toEqual({ used: 9, dropped: 0 });
    });

    it('keeps accounts apart', async () => {
      await quota.reserve(account, jan, 10, drop);
      expect(await quota.reserve(`${account}-b`, jan, 10, drop)).toEqual({ accepted: 10, dropped: 0 });
    });

    it('a failing seed throws, and the next call seeds again', async () => {
      let fail = true;
      const flaky = await factory(async () => {
        if (fail) throw new Error('store down');
        return { used: 3, dropped: 0 };
      });
      try {
        await expect(flaky.reserve(account, jan, 1, drop)).rejects.toThrow('store down');
        fail = false;
        expect(await flaky.reserve(account, jan, 1, drop)).toEqual({ accepted: 1, dropped: 0 });
        expect(await flaky.current(account, jan)).toEqual({ used: 4, dropped: 0 });
      } finally {
        await flaky.close();
      }
    });
  });
}
