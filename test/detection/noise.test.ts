import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { alertSpec } from '../../src/detection/specs.js';
import { createDetectStage } from '../../src/pipeline/detect.js';
import { accountContext, enriched } from './helpers.js';
import { benignDay, benignUsers, NIGHTLY_JOBS } from './benign-traffic.js';

const DAY = 86_400_000;

describe('noise', () => {
  it('a benign day for 3,000 users (after a week of history) raises no high or critical alert, and no decision above allow from alerts', async () => {
    const users = benignUsers(3000);
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    const detect = createDetectStage({ state });
    const ctx = accountContext();
    const byType = new Map<string, number>();
    let events = 0;
    const seen = new Map<string, number>();
    let proxied = 0;
    let carrierHops = 0;
    let nightlyExports = 0;
    let standing = 0;
    for (let day = 0; day < 8; day++) {
      for (const spec of benignDay(users, day * DAY, 100 + day, day === 7 ? 'travel' : day === 3 ? 'full' : 'history')) {
        events++;
        seen.set(spec.type, (seen.get(spec.type) ?? 0) + 1);
        if (spec.asn === 53813) proxied++;
        if (spec.session?.endsWith('-carrier-2')) carrierHops++;
        if (spec.actor?.startsWith('svc-export-')) nightlyExports++;
        const detection = await detect(enriched(spec), ctx);
        if (detection.standing !== undefined) standing++;
        for (const hit of detection.alerts) byType.set(hit.type, (byType.get(hit.type) ?? 0) + 1);
      }
    }
    const serious = [...byType].filter(([type]) => ['high', 'critical'].includes(alertSpec(type).severity));
    expect(events).toBeGreaterThan(50_000);
    // The day really contains the awkward parts: typos, exports, resets, API 404s, travellers (seen as new countries).
    for (const type of ['auth.login.failure', 'data.exported', 'auth.password.reset_requested', 'api.request', 'data.accessed'])
      expect(seen.get(type) ?? 0, type).toBeGreaterThan(10);
    expect(byType.get('auth.new_country') ?? 0).toBeGreaterThan(10);
    // Mobile users moved by their carrier, employees behind a security proxy, nightly export jobs.
    expect(carrierHops).toBeGreaterThan(50);
    expect(proxied).toBeGreaterThan(100);
    expect(nightlyExports).toBe(8 * NIGHTLY_JOBS);
    expect(serious, JSON.stringify(Object.fromEntries(byType))).toEqual([]);
    expect(standing, 'events under a standing alert').toBe(0);
    await state.close();
  }, 60_000);
});
