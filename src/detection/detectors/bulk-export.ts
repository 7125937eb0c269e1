import { MINUTE, th, type Detector, type Slot } from '../detector.js';
import { primarySubject, type EventFacts } from '../facts.js';
import { BYTES_KEYS, numberOf, ROWS_KEYS } from '../metadata.js';
import type { WindowResult } from '../state/state-store.js';

const EXPORT_TYPES = new Set(['data.exported', 'data.downloaded', 'admin.audit_log.exported']);
export const isExport = (f: EventFacts): boolean => EXPORT_TYPES.has(f.type) || f.has('data.export');

/**
 * data.bulk_export: one export of >= rows or >= megabytes; data.exfiltration_volume: rows
 * summed, or exports counted, per actor over the window.
 */
export const bulkExport: Detector = {
  name: 'bulk_export',
  detect(ctx, t) {
    const f = ctx.facts;
    if (!isExport(f)) return;
    const rows = numberOf(f.event.metadata, ROWS_KEYS);
    const bytes = numberOf(f.event.metadata, BYTES_KEYS);
    const subject = primarySubject(f);
    if ((rows !== undefined && rows >= th(t, 'rows')) || (bytes !== undefined && bytes >= th(t, 'megabytes') * 1e6)) {
      ctx.raise('data.bulk_export', subject, {
        rows: rows ?? null,
        bytes: bytes ?? null,
        rows_threshold: th(t, 'rows'),
        megabytes_threshold: th(t, 'megabytes'),
      });
    }
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const key = ctx.key('w', subject);
    const exports = ctx.ops.add({ kind: 'window.add', key, field: 'exports', at: f.at, windowMs });
    let rowSum: Slot<WindowResult> | undefined;
    if (rows !== undefined && rows > 0) rowSum = ctx.ops.add({ kind: 'window.add', key, field: 'export_rows', at: f.at, windowMs, amount: rows });
    return (answers) => {
      const count = answers.get(exports).sum;
      const total = rowSum === undefined ? 0 : answers.get(rowSum).sum;
      if (count >= th(t, 'volume_exports') || total >= th(t, 'volume_rows')) {
        ctx.raise('data.exfiltration_volume', subject, {
          exports: count,
          rows: total,
          volume_exports: th(t, 'volume_exports'),
          volume_rows: th(t, 'volume_rows'),
          window_minutes: th(t, 'window_minutes'),
        });
      }
    };
  },
};
