import { MINUTE_MS, HOUR_MS, DAY_MS } from '../../util/duration.js';
import { defineDetector, type Slot, type ThresholdValues } from '../detector.js';
import { primarySubject, type EventFacts } from '../facts.js';
import { BYTES_KEYS, numberOf, ROWS_KEYS } from '../metadata.js';
import type { LastResult, StateValue, WindowResult } from '../state/state-store.js';

const EXPORT_TYPES = new Set(['data.exported', 'data.downloaded', 'admin.audit_log.exported']);
export const isExport = (f: EventFacts): boolean => EXPORT_TYPES.has(f.type) || f.has('data.export');

/** One day of an actor's export history: [day number, most rows in a window, most exports in a window]. */
type DayPeak = readonly [number, number, number];
/** The scale of the median absolute deviation that estimates a standard deviation. */
const MAD_SCALE = 1.4826;

function peaksOf(result: LastResult): DayPeak[] {
  const value = result.previous?.value;
  if (!Array.isArray(value)) return [];
  return value.filter((d): d is DayPeak => Array.isArray(d) && d.length === 3 && d.every((n) => typeof n === 'number'));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * The volume an actor's history makes unusual: the median of the daily peaks plus the larger of
 * `baseline_deviations` robust standard deviations (MAD-based) and `baseline_margin_percent` of
 * the median, so that a job exporting the same amount every day has room to grow a little.
 */
function baselineLimit(values: readonly number[], t: ThresholdValues<'baseline_deviations' | 'baseline_margin_percent'>): number {
  const m = median(values);
  const spread = MAD_SCALE * median(values.map((v) => Math.abs(v - m)));
  return m + Math.max(t.baseline_deviations * spread, (t.baseline_margin_percent / 100) * m);
}

/**
 * data.bulk_export: one export of >= rows or >= megabytes; data.exfiltration_volume: rows
 * summed, or exports counted, per actor over the window, above the larger of the static
 * threshold and the actor's own baseline. The baseline is the peak window volume of each of the
 * last baseline_days days, kept in shared state; it applies once baseline_min_days days are known.
 */
export const bulkExport = defineDetector({
  name: 'bulk_export',
  families: ['data', 'admin'],
  description: "Large exports in one event, and export volume per actor over an hour above the larger of a static threshold and the actor's own baseline.",
  thresholds: {
    rows: { default: 10_000, min: 1, max: 1e12, description: 'Rows in one export that raise data.bulk_export.' },
    megabytes: { default: 100, min: 1, max: 1e9, description: 'Size in MB (10^6 bytes) of one export that raises data.bulk_export.' },
    volume_rows: {
      default: 50_000,
      min: 1,
      max: 1e12,
      description: 'Rows exported by one actor within the window that raise data.exfiltration_volume (the floor of the baseline).',
    },
    volume_exports: {
      default: 20,
      min: 2,
      max: 100_000,
      description: 'Exports by one actor within the window that raise data.exfiltration_volume (the floor of the baseline).',
    },
    window_minutes: { default: 60, min: 1, max: 10_080, description: 'Sliding window length in minutes.' },
    baseline_days: { default: 14, min: 2, max: 90, description: "Days of an actor's export history the baseline is learnt from." },
    baseline_min_days: {
      default: 3,
      min: 1,
      max: 90,
      description: 'Days with exports an actor needs before its baseline applies; until then only the static thresholds do.',
    },
    baseline_deviations: {
      default: 4,
      min: 1,
      max: 100,
      description: 'Robust standard deviations (1.4826 × median absolute deviation) above the median daily peak that the volume must exceed.',
    },
    baseline_margin_percent: {
      default: 50,
      min: 0,
      max: 10_000,
      description: 'Least room above the median daily peak, in percent of it, for actors whose volume never varies.',
    },
  },
  alerts: {
    'data.bulk_export': {
      severity: 'medium',
      mitre: ['T1530', 'T1567'],
      windowMs: HOUR_MS,
      description: 'One export or download moved a large number of rows or bytes.',
    },
    'data.exfiltration_volume': {
      severity: 'high',
      mitre: ['T1567', 'T1030'],
      windowMs: HOUR_MS,
      description:
        'One user exported more data in an hour than normal work needs and than their own history shows, in total rows or number of exports: possible data theft.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (!isExport(f)) return;
    const rows = numberOf(f.event.metadata, ROWS_KEYS);
    const bytes = numberOf(f.event.metadata, BYTES_KEYS);
    const subject = primarySubject(f);
    if ((rows !== undefined && rows >= t.rows) || (bytes !== undefined && bytes >= t.megabytes * 1e6)) {
      ctx.raise('data.bulk_export', subject, {
        rows: rows ?? null,
        bytes: bytes ?? null,
        rows_threshold: t.rows,
        megabytes_threshold: t.megabytes,
      });
    }
    const windowMs = t.window_minutes * MINUTE_MS;
    const key = ctx.key('w', subject);
    const exports = ctx.ops.add({ kind: 'window.add', key, field: 'exports', at: f.at, windowMs });
    let rowSum: Slot<WindowResult> | undefined;
    if (rows !== undefined && rows > 0) rowSum = ctx.ops.add({ kind: 'window.add', key, field: 'export_rows', at: f.at, windowMs, amount: rows });
    const baselineKey = ctx.key('p', subject);
    const baselineTtlMs = (t.baseline_days + 1) * DAY_MS;
    const history = ctx.ops.add({ kind: 'last.swap', key: baselineKey, field: 'export_days', at: f.at, ttlMs: baselineTtlMs });
    return (answers) => {
      const count = answers.get(exports).sum;
      const total = rowSum === undefined ? 0 : answers.get(rowSum).sum;
      const today = Math.floor(f.at / DAY_MS);
      const peaks = peaksOf(answers.get(history)).filter(([day]) => day > today - t.baseline_days - 1 && day <= today);
      const before = peaks.filter(([day]) => day < today);
      const learned = before.length >= t.baseline_min_days;
      const rowLimit = Math.max(
        t.volume_rows,
        learned
          ? baselineLimit(
              before.map((d) => d[1]),
              t,
            )
          : 0,
      );
      const exportLimit = Math.max(
        t.volume_exports,
        learned
          ? baselineLimit(
              before.map((d) => d[2]),
              t,
            )
          : 0,
      );
      if (count >= exportLimit || total >= rowLimit) {
        ctx.raise('data.exfiltration_volume', subject, {
          exports: count,
          rows: total,
          volume_exports: t.volume_exports,
          volume_rows: t.volume_rows,
          window_minutes: t.window_minutes,
          baseline_days: learned ? before.length : 0,
          exports_limit: Math.round(exportLimit),
          rows_limit: Math.round(rowLimit),
        });
      }
      const current = peaks.find(([day]) => day === today);
      if (current !== undefined && current[1] >= total && current[2] >= count) return;
      const updated: StateValue = [
        ...before,
        [today, Math.max(current?.[1] ?? 0, total), Math.max(current?.[2] ?? 0, count)],
        ...peaks.filter(([day]) => day > today),
      ];
      ctx.after.add({ kind: 'last.swap', key: baselineKey, field: 'export_days', at: f.at, value: updated, ttlMs: baselineTtlMs });
    };
  },
});
