import { closeSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { eventIdOf, makeEvent } from '../event.js';
import { classifyChange, markOf, statOrUndefined, type FileMark } from '../util/rotation.js';
import { every, type Source, type SourceContext } from './source.js';

/** Size of a login record in wtmp and btmp (struct utmp, glibc on Linux), and where its seconds field sits. */
const UTMP_RECORD = 384;
const UTMP_TV_SEC = 340;
const isLoginRecordFile = (path: string) => /^[wb]tmp(\.|-|$)/.test(basename(path));

/** Zeroed login records in a wtmp/btmp file (what log wipers leave), with the times around the first gap. */
export function zeroedLoginRecords(path: string): { zeroed: number; after: number | undefined; before: number | undefined } {
  const zero = Buffer.alloc(UTMP_RECORD);
  const chunk = Buffer.alloc(UTMP_RECORD * 2048);
  let zeroed = 0;
  let lastSeen: number | undefined;
  let after: number | undefined;
  let before: number | undefined;
  let inFirstGap = false;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    for (let pos = 0; ;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n < UTMP_RECORD) break;
      for (let off = 0; off + UTMP_RECORD <= n; off += UTMP_RECORD) {
        const record = chunk.subarray(off, off + UTMP_RECORD);
        if (record.equals(zero)) {
          if (zeroed === 0) {
            inFirstGap = true;
            after = lastSeen;
          }
          zeroed++;
          continue;
        }
        lastSeen = record.readInt32LE(UTMP_TV_SEC) * 1000;
        if (inFirstGap) {
          before = lastSeen;
          inFirstGap = false;
        }
      }
      pos += n - (n % UTMP_RECORD);
    }
  } catch {
    return { zeroed: 0, after: undefined, before: undefined };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return { zeroed, after, before };
}

/**
 * Log clearing and tampering: a log that empties, shrinks, disappears, is rewritten in
 * place, or whose modification time moves back, without a rotated copy to explain it; and
 * a gap in wtmp or btmp, login records zeroed in place (the file keeps its size and inode).
 */
export function logIntegritySource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.log_integrity;
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    for (const path of cfg.paths) {
      const key = `integrity:${path}`;
      const previous = ctx.buffer.getState<FileMark | null>(key) ?? undefined;
      const st = statOrUndefined(path);
      if (previous === undefined && st === undefined) continue;
      const change = classifyChange(path, previous, st);
      const mark = st === undefined ? null : markOf(path, st);
      if (change.kind === 'cleared' || change.kind === 'tampered') {
        const now = Date.now();
        const event = makeEvent({
          event: change.kind === 'cleared' ? 'server.log.cleared' : 'server.log.tampered',
          event_id: eventIdOf(ctx.host, 'log_integrity', path, previous?.ino ?? 0, previous?.size ?? 0, mark?.ino ?? 0, mark?.size ?? 0, now),
          at: now,
          host: ctx.host,
          metadata: { source: 'log_integrity', path, reason: change.reason, previous_size: previous?.size, size: st?.size ?? 0 },
        });
        ctx.buffer.append([event], { [key]: mark });
      } else if (change.kind !== 'unchanged') ctx.buffer.append([], { [key]: mark });
      else if (mark !== null && previous !== undefined && mark.mtimeMs !== previous.mtimeMs) ctx.buffer.append([], { [key]: mark });
      if (isLoginRecordFile(path) && mark !== null && (previous === undefined || mark.mtimeMs !== previous.mtimeMs || mark.ino !== previous.ino))
        checkGap(path);
    }
  };
  /** Reports login records zeroed since the last look; the first look only counts them. */
  const checkGap = (path: string) => {
    const key = `integrity-zeroed:${path}`;
    const known = ctx.buffer.getState<number>(key);
    const gap = zeroedLoginRecords(path);
    if (known !== undefined && gap.zeroed > known) {
      const now = Date.now();
      const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
      const event = makeEvent({
        event: 'server.log.tampered',
        event_id: eventIdOf(ctx.host, 'log_integrity', path, 'zeroed', known, gap.zeroed, now),
        at: now,
        host: ctx.host,
        metadata: {
          source: 'log_integrity',
          path,
          reason: 'records_zeroed',
          zeroed_records: gap.zeroed - known,
          gap_after: iso(gap.after),
          gap_before: iso(gap.before),
        },
      });
      ctx.buffer.append([event], { [key]: gap.zeroed });
    } else if (known !== gap.zeroed) ctx.buffer.append([], { [key]: gap.zeroed });
  };
  return {
    name: 'log_integrity',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'log_integrity', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
