import { describe, expect, it } from 'vitest';
import { IngestAdmission } from '../../src/http/ingest-admission.js';
import { governBySaturation, SaturationGovernor, SATURATION } from '../../src/http/saturation.js';
import { until } from '../helpers/until.js';

const limits = { budgetBytes: 1_000_000, maxInFlight: 128, maxWaiting: 1_000, maxWaitMs: 1_000 };

describe('SaturationGovernor', () => {
  it('halves the in-flight limit from the second saturated window in a row on, down to its floor', () => {
    const admission = new IngestAdmission(limits);
    const governor = new SaturationGovernor(admission);
    governor.observe(0.99);
    // One busy window is a long task or a collection, not a backlog.
    expect(admission.inFlightLimitNow).toBe(128);
    governor.observe(0.99);
    expect(admission.inFlightLimitNow).toBe(64);
    governor.observe(0.98);
    expect(admission.inFlightLimitNow).toBe(32);
    for (let i = 0; i < 10; i++) governor.observe(1);
    expect(admission.inFlightLimitNow).toBe(SATURATION.minInFlight);
    // A window with time to spare breaks the run: the next busy one alone lowers nothing.
    governor.observe(0.5);
    const raised = admission.inFlightLimitNow;
    governor.observe(0.99);
    expect(admission.inFlightLimitNow).toBe(raised);
  });

  it('raises the limit by an eighth per window with time to spare, up to the configured one, and holds it in between', () => {
    const admission = new IngestAdmission(limits);
    const governor = new SaturationGovernor(admission);
    admission.setInFlightLimit(16);
    governor.observe(0.8);
    expect(admission.inFlightLimitNow).toBe(18);
    // Busy but not saturated: neither up nor down.
    governor.observe(0.95);
    expect(admission.inFlightLimitNow).toBe(18);
    for (let i = 0; i < 40; i++) governor.observe(0.1);
    expect(admission.inFlightLimitNow).toBe(128);
  });

  it('never lowers the limit below a configured maximum smaller than its floor', () => {
    const admission = new IngestAdmission({ ...limits, maxInFlight: 4 });
    const governor = new SaturationGovernor(admission);
    for (let i = 0; i < 5; i++) governor.observe(1);
    expect(admission.inFlightLimitNow).toBe(4);
  });
});

describe('IngestAdmission with a lowered in-flight limit', () => {
  it('makes requests past the new limit wait, and lets them in as it is raised again', async () => {
    const admission = new IngestAdmission(limits);
    admission.setInFlightLimit(1);
    expect(admission.enter(1, 'a')).toBeUndefined();
    const second = admission.enter(1, 'b');
    expect(second).toBeInstanceOf(Promise);
    expect(admission.queued).toBe(1);
    admission.setInFlightLimit(2);
    await second;
    expect(admission.queued).toBe(0);
    expect(admission.inFlightRequests).toBe(2);
    // Never above the configured maximum.
    admission.setInFlightLimit(10_000);
    expect(admission.inFlightLimitNow).toBe(128);
  });
});

describe('governBySaturation', () => {
  it('lowers the limit while the event loop is kept busy, and raises it back once the loop idles', async () => {
    const admission = new IngestAdmission(limits);
    const stop = governBySaturation(admission, { ...SATURATION, windowMs: 20 });
    try {
      // Busy: each turn spins 30 ms, longer than a window, then lets the timers run.
      const busyUntil = performance.now() + 400;
      while (performance.now() < busyUntil) {
        const spinEnd = performance.now() + 30;
        while (performance.now() < spinEnd);
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(admission.inFlightLimitNow).toBeLessThan(128);
      await until(() => admission.inFlightLimitNow === 128, 'the limit back at its maximum on an idle loop');
    } finally {
      stop();
    }
  });

  it('governs nothing without a bound on the requests in flight', () => {
    const admission = new IngestAdmission({ budgetBytes: 1_000, maxWaiting: 10, maxWaitMs: 1_000 });
    const stop = governBySaturation(admission, { ...SATURATION, windowMs: 1 });
    stop();
    expect(admission.inFlightLimitNow).toBe(Number.POSITIVE_INFINITY);
  });
});
