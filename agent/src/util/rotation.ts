import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync, type Stats } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { basename, dirname, join } from 'node:path';

/** What the agent remembers of a log file between looks: identity, size, first line. */
export interface FileMark {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  /** Hash of the first line (up to 256 bytes); tells "the same log, rewritten" from "a new log". */
  readonly head: string;
}

/** The hash of the first line (up to 256 bytes) of these bytes. */
function headOfBytes(bytes: Buffer): string {
  const first = bytes.subarray(0, 256);
  const nl = first.indexOf(0x0a);
  return createHash('sha1')
    .update(first.subarray(0, nl < 0 ? first.length : nl))
    .digest('hex')
    .slice(0, 16);
}

export function headOf(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    return headOfBytes(buf.subarray(0, n));
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function markOf(path: string, st: Stats): FileMark {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, head: st.size > 0 ? headOf(path) : '' };
}

export function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Rotated siblings of a log: auth.log.1, auth.log-20260126, secure-20260126 (not compressed ones). */
export function rotatedSiblings(path: string): string[] {
  const dir = dirname(path);
  const base = basename(path);
  try {
    return readdirSync(dir)
      .filter((n) => n !== base && n.startsWith(base) && /^[.-]/.test(n.slice(base.length)) && !/\.(gz|xz|bz2|zst)$/.test(n))
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** The rotated sibling that is still the file the agent knew (same inode), after a rename rotation. */
export function findRenamed(path: string, ino: number): string | undefined {
  return rotatedSiblings(path).find((p) => statOrUndefined(p)?.ino === ino);
}

/** The largest rotated log decompressed to find where an unread rest went. */
const MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024;

/**
 * A rotated log compressed before the agent read all of it (logrotate's `compress`, or
 * `delaycompress` while the agent was stopped): the decompressed bytes of the `.gz` sibling that
 * starts like the log did and holds at least `size` bytes, newest first; undefined when none does.
 */
export function findCompressed(path: string, head: string, size: number): Buffer | undefined {
  if (head === '') return undefined;
  const dir = dirname(path);
  const base = basename(path);
  let candidates: string[];
  try {
    candidates = readdirSync(dir)
      .filter((n) => n.startsWith(base) && n.endsWith('.gz') && /^[.-]/.test(n.slice(base.length)))
      .map((n) => join(dir, n))
      .sort((a, b) => (statOrUndefined(b)?.mtimeMs ?? 0) - (statOrUndefined(a)?.mtimeMs ?? 0));
  } catch {
    return undefined;
  }
  for (const candidate of candidates) {
    try {
      const bytes = gunzipSync(readFileSync(candidate), { maxOutputLength: MAX_DECOMPRESSED_BYTES });
      if (bytes.length >= size && headOfBytes(bytes) === head) return bytes;
    } catch {
      // Unreadable, corrupt or larger than the bound: not the one.
    }
  }
  return undefined;
}

/** After a copytruncate rotation: the copy, which starts like the log did and holds at least what was read. */
export function findCopy(path: string, previous: FileMark): string | undefined {
  return rotatedSiblings(path).find((p) => {
    const st = statOrUndefined(p);
    return st !== undefined && st.size >= previous.size && headOf(p) === previous.head;
  });
}

export type LogChange =
  { kind: 'unchanged' | 'grew' | 'appeared' } | { kind: 'rotated'; previousAt: string | undefined } | { kind: 'cleared' | 'tampered'; reason: string };

/**
 * How a log changed between two looks. Rotation (renamed to a sibling, or copied then
 * truncated) is normal; a log that shrinks, empties, disappears or is rewritten without a
 * rotated copy is cleared or tampered with.
 */
export function classifyChange(path: string, previous: FileMark | undefined, now: Stats | undefined): LogChange {
  if (previous === undefined) return { kind: 'appeared' };
  if (now === undefined) {
    const renamed = findRenamed(path, previous.ino);
    return renamed !== undefined ? { kind: 'rotated', previousAt: renamed } : { kind: 'cleared', reason: 'deleted' };
  }
  if (now.ino === previous.ino) {
    if (now.size > previous.size) return { kind: 'grew' };
    if (now.size === previous.size) return now.mtimeMs < previous.mtimeMs ? { kind: 'tampered', reason: 'mtime_moved_back' } : { kind: 'unchanged' };
    const copy = findCopy(path, previous);
    if (copy !== undefined) return { kind: 'rotated', previousAt: copy };
    return now.size === 0 ? { kind: 'cleared', reason: 'truncated' } : { kind: 'tampered', reason: 'shrank' };
  }
  const renamed = findRenamed(path, previous.ino);
  if (renamed !== undefined) return { kind: 'rotated', previousAt: renamed };
  if (now.size > 0 && previous.head !== '' && headOf(path) === previous.head) return { kind: 'tampered', reason: 'rewritten' };
  if (now.size === 0 && previous.size > 0) return { kind: 'cleared', reason: 'replaced_by_empty_file' };
  return { kind: 'rotated', previousAt: undefined };
}
