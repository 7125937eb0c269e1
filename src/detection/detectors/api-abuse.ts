import { MINUTE_MS } from '../../util/duration.js';
import { defineDetector, type Slot } from '../detector.js';
import type { DistinctResult, WindowResult } from '../state/state-store.js';

const UNAUTHORIZED_TYPES = new Set(['api.unauthorized', 'api.forbidden', 'api.token.invalid']);

/** api.unauthorized_burst: 401/403 answers per IP; api.enumeration: distinct failing paths per IP. */
export const apiAbuse = defineDetector({
  name: 'api_abuse',
  families: ['api', 'authentication'],
  description: 'Bursts of 401/403 answers and enumeration of many failing paths from one IP.',
  thresholds: {
    unauthorized: { default: 20, min: 2, max: 100_000, description: '401/403 answers to one IP within the window.' },
    distinct_paths: { default: 30, min: 2, max: 100_000, description: 'Distinct failing paths requested by one IP within the window.' },
    window_minutes: { default: 5, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
  },
  alerts: {
    'api.unauthorized_burst': {
      severity: 'medium',
      mitre: ['T1110', 'T1595'],
      windowMs: 5 * MINUTE_MS,
      description: 'Many 401/403 answers to one IP address in a short window: invalid or stolen tokens being tried, or probing of protected endpoints.',
    },
    'api.enumeration': {
      severity: 'medium',
      mitre: ['T1595.003', 'T1083'],
      windowMs: 5 * MINUTE_MS,
      description: 'One IP address requested many different paths that failed in a short window: endpoint or object enumeration.',
      // Enumerating endpoints is deliberate probing; a bot that keeps going should meet a challenge.
      decision: 'challenge',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined) return;
    const status = f.status;
    const unauthorized = status === 401 || status === 403 || UNAUTHORIZED_TYPES.has(f.type);
    const path = f.event.request?.path;
    // 429 is the caller's own rate limiting, not probing.
    const failingPath = path !== undefined && status !== undefined && status >= 400 && status < 500 && status !== 429;
    if (!unauthorized && !failingPath) return;
    const windowMs = t.window_minutes * MINUTE_MS;
    const key = ctx.key('w', f.ipSubject);
    let denied: Slot<WindowResult> | undefined;
    let paths: Slot<DistinctResult> | undefined;
    if (unauthorized) denied = ctx.ops.add({ kind: 'window.add', key, field: 'denied', at: f.at, windowMs });
    if (failingPath) {
      const q = path.indexOf('?');
      paths = ctx.ops.add({ kind: 'distinct.add', key, field: 'fail_paths', at: f.at, windowMs, member: q < 0 ? path : path.slice(0, q) });
    }
    return (answers) => {
      const minutes = t.window_minutes;
      if (denied !== undefined) {
        const n = answers.get(denied).sum;
        if (n >= t.unauthorized) ctx.raise('api.unauthorized_burst', f.ipSubject, { denied: n, threshold: t.unauthorized, window_minutes: minutes });
      }
      if (paths !== undefined) {
        const n = answers.get(paths).distinct;
        if (n >= t.distinct_paths) ctx.raise('api.enumeration', f.ipSubject, { distinct_paths: n, threshold: t.distinct_paths, window_minutes: minutes });
      }
    };
  },
});
