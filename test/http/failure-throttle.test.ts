import { describe, expect, it } from 'vitest';
import { FailureThrottle, failureSource } from '../../src/http/failure-throttle.js';
import { ADMIN_FAILURE_LIMITS } from '../../src/http/guards.js';

describe('failure throttle', () => {
  it('counts IPv4 per address and IPv6 per /64 (IPv4-mapped as IPv4)', () => {
    expect(failureSource('203.0.113.9')).toBe('203.0.113.9');
    expect(failureSource('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(failureSource('2001:db8:a:b:1:2:3:4')).toBe('2001:db8:a:b::/64');
    expect(failureSource('2001:DB8:A:B::%eth0')).toBe('2001:db8:a:b::/64');
  });

  it('stays within its bound under 100,000 distinct addresses, IPv4 and IPv6', () => {
    const throttle = new FailureThrottle(ADMIN_FAILURE_LIMITS);
    let refused = 0;
    let largest = 0;
    for (let n = 0; n < 100_000; n++) {
      refused += throttle.fail(`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, n);
      refused += throttle.fail(`2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`, n);
      largest = Math.max(largest, throttle.size);
    }
    expect(refused).toBe(0);
    expect(largest).toBe(ADMIN_FAILURE_LIMITS.maxSources);
    expect(throttle.size).toBe(ADMIN_FAILURE_LIMITS.maxSources);
  });

  it('refuses a source past its limit until its oldest failure leaves the window, without counting the refused attempts', () => {
    const throttle = new FailureThrottle({ perSource: 3, windowMs: 60_000, maxSources: 10 });
    expect([0, 1_000, 2_000].map((at) => throttle.fail('192.0.2.1', at))).toEqual([0, 0, 0]);
    expect(throttle.fail('192.0.2.1', 3_000)).toBe(57);
    expect(throttle.fail('192.0.2.1', 59_500)).toBe(1);
    expect(throttle.fail('192.0.2.1', 60_000)).toBe(0);
    expect(throttle.fail('192.0.2.1', 60_500)).toBe(1);
  });
});
