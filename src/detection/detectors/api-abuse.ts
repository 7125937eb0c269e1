import { MINUTE, th, type Detector, type Slot } from '../detector.js';
import type { DistinctResult, WindowResult } from '../state/state-store.js';

const UNAUTHORIZED_TYPES = new Set(['api.unauthorized', 'api.forbidden', 'api.token.invalid']);

/** api.unauthorized_burst: 401/403 answers per IP; api.enumeration: distinct failing paths per IP. */
export const apiAbuse: Detector = {
  name: 'api_abuse',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined) return;
    const status = f.status;
    const unauthorized = status === 401 || status === 403 || UNAUTHORIZED_TYPES.has(f.type);
    const path = f.event.request?.path;
    // 429 is the caller's own rate limiting, not probing.
    const failingPath = path !== undefined && status !== undefined && status >= 400 && status < 500 && status !== 429;
    if (!unauthorized && !failingPath) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const key = ctx.key('w', f.ipSubject);
    let denied: Slot<WindowResult> | undefined;
    let paths: Slot<DistinctResult> | undefined;
    if (unauthorized) denied = ctx.ops.add({ kind: 'window.add', key, field: 'denied', at: f.at, windowMs });
    if (failingPath) {
      const q = path.indexOf('?');
      paths = ctx.ops.add({ kind: 'distinct.add', key, field: 'fail_paths', at: f.at, windowMs, member: q < 0 ? path : path.slice(0, q) });
    }
    return (answers) => {
      const minutes = th(t, 'window_minutes');
      if (denied !== undefined) {
        const n = answers.get(denied).sum;
        if (n >= th(t, 'unauthorized'))
          ctx.raise('api.unauthorized_burst', f.ipSubject, { denied: n, threshold: th(t, 'unauthorized'), window_minutes: minutes });
      }
      if (paths !== undefined) {
        const n = answers.get(paths).distinct;
        if (n >= th(t, 'distinct_paths'))
          ctx.raise('api.enumeration', f.ipSubject, { distinct_paths: n, threshold: th(t, 'distinct_paths'), window_minutes: minutes });
      }
    };
  },
};
