import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import type { EventBuffer } from '../buffer.js';
import type { AgentEvent } from '../event.js';
import type { Logger } from '../log.js';
import { findCompressed, findCopy, findRenamed, headOf, statOrUndefined, type FileMark } from '../util/rotation.js';

/** A complete line of a log file and the byte offset where it starts. */
export interface Line {
  readonly text: string;
  readonly offset: number;
}

/** Turns the lines of one chunk into events; `file` names the inode, for stable event ids. */
export type LineHandler = (lines: readonly Line[], file: { readonly path: string; readonly ino: number }) => AgentEvent[];

/** A rotated file still being followed: its writer may not have reopened the log yet. */
interface RetiredPosition {
  readonly ino: number;
  readonly offset: number;
  readonly head: string;
  /** When it was retired, and when it last grew (ms). */
  readonly since: number;
  readonly grewAt: number;
}

interface TailPosition {
  readonly ino: number;
  readonly offset: number;
  readonly head: string;
  readonly retired?: readonly RetiredPosition[];
}

export interface TailTiming {
  /**
   * A rotated file is followed until it has had no new line for this long and the new log has
   * been written to (its writer has moved on), or for `retiredMaxMs` at most.
   */
  readonly retiredIdleMs: number;
  readonly retiredMaxMs: number;
  readonly now: () => number;
}

export const TAIL_TIMING: TailTiming = { retiredIdleMs: 60_000, retiredMaxMs: 15 * 60_000, now: Date.now };

/** Rotated files followed at once per log: each holds a file descriptor. */
const MAX_RETIRED = 4;

const CHUNK = 256 * 1024;

/**
 * The complete lines of `buf[0, end)`, `base` being the file offset of `buf[0]`, and the bytes they
 * take. A line ends at LF; a CR before it belongs to the line end (logs copied from Windows hosts,
 * some appliances and syslog relays end lines in CRLF).
 */
export function completeLines(buf: Buffer, end: number, base: number): { readonly lines: Line[]; readonly consumed: number } {
  const lines: Line[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a, 0); nl >= 0 && nl < end; nl = buf.indexOf(0x0a, start)) {
    lines.push({ text: lineText(buf, start, nl), offset: base + start });
    start = nl + 1;
  }
  return { lines, consumed: start };
}

/** The text of `buf[start, end)` without a trailing CR. */
export function lineText(buf: Buffer, start: number, end: number): string {
  return buf.toString('utf8', start, end > start && buf[end - 1] === 0x0d ? end - 1 : end);
}

/**
 * Follows one log file by polling: reads complete lines from the saved offset, and saves
 * the new offset in the same transaction as the events those lines produced. The file is read
 * through a descriptor kept open, so a file renamed, compressed or deleted by a rotation is
 * still read to its end. Rotation by rename is followed, late writes included: the renamed
 * file stays followed (by its inode, also across restarts) until it has been idle for
 * `retiredIdleMs` and the new log has been written to. copytruncate is followed (the rest
 * is read from the copy); a rotated file compressed while the agent was stopped is read from
 * its `.gz`. A truncated log is read again from 0. The first time a file is seen it is read
 * from its end: history is not replayed.
 */
export class FileTail {
  private readonly stateKey: string;
  /** Open descriptors by inode: the current file's and the retired ones'. */
  private readonly open = new Map<number, number>();

  constructor(
    readonly path: string,
    private readonly buffer: EventBuffer,
    private readonly handle: LineHandler,
    private readonly log: Logger,
    private readonly fromStart = false,
    private readonly timing: TailTiming = TAIL_TIMING,
  ) {
    this.stateKey = `tail:${path}`;
  }

  poll(): void {
    const st = statOrUndefined(this.path);
    let pos = this.position();
    if (pos === undefined) {
      if (st === undefined) return;
      pos = { ino: st.ino, offset: this.fromStart ? 0 : st.size, head: headOf(this.path) };
      this.save([], pos);
    }
    // A log first seen empty gets its first line remembered once it has one.
    if (pos.head === '' && st !== undefined && st.ino === pos.ino && st.size > 0) {
      pos = { ...pos, head: headOf(this.path) };
      this.save([], pos);
    }
    if (!this.followRetired(pos, st)) return;
    pos = this.position() ?? pos;
    if (st === undefined || st.ino !== pos.ino) return this.rotated(pos, st);
    // Truncated: shorter than what was read, or (truncated and refilled between two looks) starting with another first line.
    if (st.size < pos.offset || (pos.head !== '' && st.size > 0 && headOf(this.path) !== pos.head)) {
      // copytruncate: the copy holds the lines after our offset; read them from there first.
      const mark: FileMark = { ino: pos.ino, size: pos.offset, mtimeMs: 0, head: pos.head };
      // A rotated file compressed while the agent was stopped may also show up here: its inode freed, the new log can reuse it.
      const copyPath = findCopy(this.path, mark);
      const compressed = copyPath === undefined ? findCompressed(this.path, pos.head, pos.offset) : undefined;
      const copy: Source | undefined =
        copyPath !== undefined ? { kind: 'path', path: copyPath } : compressed !== undefined ? { kind: 'bytes', bytes: compressed } : undefined;
      if (copy !== undefined && !this.readLines(copy, pos.offset, pos.ino, true, this.mainAt(pos)).done) return;
      this.release(pos.ino);
      this.save([], { ...(this.position() ?? pos), ino: st.ino, offset: 0, head: headOf(this.path) });
      return this.poll();
    }
    if (st.size > pos.offset) {
      const fd = this.descriptor(pos.ino, this.path);
      if (fd !== undefined) this.readLines({ kind: 'open', fd, end: st.size }, pos.offset, pos.ino, false, this.mainAt(pos));
    }
  }

  /** Closes every descriptor (the source stopped). */
  close(): void {
    for (const fd of this.open.values()) closeSync(fd);
    this.open.clear();
  }

  /**
   * The log's path names another file (or none): the file followed so far is read to its end
   * wherever it now is, and stays followed for late writes when it can still be read.
   */
  private rotated(pos: TailPosition, st: Stats | undefined): void {
    const head = st === undefined ? '' : headOf(this.path);
    // The same first line in a new inode, and the old file under no rotated name: the log was
    // rewritten in place (an editor, sed -i), not rotated. Reading it again would resend old
    // lines; the log-integrity source reports the rewrite.
    if (st !== undefined && head !== '' && head === pos.head && findRenamed(this.path, pos.ino) === undefined) {
      this.release(pos.ino);
      this.save([], { ...pos, ino: st.ino, offset: st.size, head });
      return;
    }
    const old = this.source(pos);
    let oldEnd = pos.offset;
    if (old !== undefined) {
      // A file still followed waits for the newline of its last line; a compressed copy is final.
      const read = this.readLines(old, pos.offset, pos.ino, old.kind === 'bytes', this.mainAt(pos));
      if (!read.done) return;
      oldEnd = read.offset;
    }
    // Moved away and not yet replaced: the old file is read again at the next look.
    if (st === undefined) return;
    const now = this.timing.now();
    let retired = this.position()?.retired ?? [];
    if (old?.kind === 'open') retired = [...retired, { ino: pos.ino, offset: oldEnd, head: pos.head, since: now, grewAt: now }];
    else this.release(pos.ino);
    for (const dropped of retired.slice(0, Math.max(0, retired.length - MAX_RETIRED))) this.finish(dropped);
    this.save([], { ino: st.ino, offset: 0, head, retired: retired.slice(-MAX_RETIRED) });
    this.log.info('log rotated; following the new file', { path: this.path });
    this.poll();
  }

  /**
   * Reads what was written to rotated files since the last look, and stops following those
   * that are done; false while the buffer is full.
   */
  private followRetired(pos: TailPosition, current: Stats | undefined): boolean {
    const retired = pos.retired ?? [];
    if (retired.length === 0) return true;
    const now = this.timing.now();
    const kept: RetiredPosition[] = [];
    for (const r of retired) {
      const source = this.retiredSource(r);
      if (source === undefined) continue;
      let entry = r;
      if (source.kind === 'bytes') {
        // Compressed while the agent was stopped: what is in the copy is all there will be.
        if (!this.readLines(source, r.offset, r.ino, true, this.retiredAt(r, now)).done) return false;
        continue;
      }
      if (source.end > r.offset) {
        const read = this.readLines(source, r.offset, r.ino, false, this.retiredAt(r, now));
        if (!read.done) return false;
        // A line still being written is no new line yet.
        if (read.offset > r.offset) entry = { ...r, offset: read.offset, grewAt: now };
      }
      const writerMovedOn = current !== undefined && current.ino !== r.ino && current.size > 0;
      const idle = now - entry.grewAt >= this.timing.retiredIdleMs;
      if ((idle && writerMovedOn) || now - entry.since >= this.timing.retiredMaxMs) {
        if (!this.finish(entry)) return false;
        continue;
      }
      kept.push(entry);
    }
    this.save([], { ...(this.position() ?? pos), retired: kept });
    return true;
  }

  /** Stops following a rotated file: its last line is read even without a newline. */
  private finish(r: RetiredPosition): boolean {
    const fd = this.open.get(r.ino);
    if (fd !== undefined) {
      const end = fstatSync(fd).size;
      if (!this.readLines({ kind: 'open', fd, end }, r.offset, r.ino, true, this.retiredAt(r, this.timing.now())).done) return false;
    }
    this.release(r.ino);
    this.log.debug('rotated log done', { path: this.path, ino: r.ino });
    return true;
  }

  /** Where a retired file is read: its open descriptor, its rotated name (after a restart), or its compressed copy. */
  private retiredSource(r: RetiredPosition): OpenSource | BytesSource | undefined {
    return this.source({ ino: r.ino, offset: r.offset, head: r.head });
  }

  /**
   * Where the file at `pos` can still be read after it left the log's path: the descriptor
   * held open, else (after a restart) the rotated sibling with its inode, else its compressed copy.
   */
  private source(pos: TailPosition): OpenSource | BytesSource | undefined {
    let fd = this.open.get(pos.ino);
    if (fd === undefined) {
      const renamed = findRenamed(this.path, pos.ino);
      if (renamed !== undefined) fd = this.descriptor(pos.ino, renamed);
    }
    if (fd !== undefined) return { kind: 'open', fd, end: fstatSync(fd).size };
    const compressed = findCompressed(this.path, pos.head, pos.offset);
    return compressed === undefined ? undefined : { kind: 'bytes', bytes: compressed };
  }

  private position(): TailPosition | undefined {
    return this.buffer.getState<TailPosition>(this.stateKey);
  }

  /** The position to save after reading the followed file to `offset` (retired files as saved). */
  private mainAt(pos: TailPosition): (offset: number) => TailPosition {
    return (offset) => ({ ...(this.position() ?? pos), offset });
  }

  /** The position to save after reading retired file `r` to `offset`. */
  private retiredAt(r: RetiredPosition, now: number): (offset: number) => TailPosition {
    return (offset) => {
      const latest = this.position() as TailPosition;
      return { ...latest, retired: (latest.retired ?? []).map((x) => (x.ino === r.ino ? { ...x, offset, grewAt: now } : x)) };
    };
  }

  /** The open descriptor of this inode, opening `path` when there is none; undefined when the path holds another file by now. */
  private descriptor(ino: number, path: string): number | undefined {
    const known = this.open.get(ino);
    if (known !== undefined) return known;
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      this.log.warn('cannot open log', { path, error: (err as Error).message });
      return undefined;
    }
    if (fstatSync(fd).ino !== ino) {
      closeSync(fd);
      return undefined;
    }
    this.open.set(ino, fd);
    return fd;
  }

  private release(ino: number): void {
    const fd = this.open.get(ino);
    if (fd === undefined) return;
    closeSync(fd);
    this.open.delete(ino);
  }

  private save(events: AgentEvent[], pos: TailPosition): void {
    this.buffer.append(events, { [this.stateKey]: pos });
  }

  /**
   * Reads complete lines from `from`, in chunks, saving each chunk's events with the position
   * `positionAt(offset)`. `final`: the file gets no more lines, so its last line counts without
   * a newline. Answers whether the end was reached (false when the buffer filled) and the offset.
   */
  private readLines(
    source: Source,
    from: number,
    ino: number,
    final: boolean,
    positionAt: (offset: number) => TailPosition,
  ): { done: boolean; offset: number } {
    let fd: number | undefined;
    if (source.kind === 'path') {
      try {
        fd = openSync(source.path, 'r');
      } catch (err) {
        this.log.warn('cannot open log', { path: source.path, error: (err as Error).message });
        return { done: true, offset: from };
      }
    }
    let offset = from;
    try {
      const buf = Buffer.alloc(CHUNK);
      while (!this.buffer.full) {
        const n = readChunk(source, fd, buf, offset);
        if (n === 0) return { done: true, offset };
        const complete = completeLines(buf, n, offset);
        const lines = complete.lines;
        let start = complete.consumed;
        if (lines.length === 0) {
          // An incomplete last line waits for its newline, unless the file is final.
          if (!final) return { done: true, offset };
          if (n < CHUNK) {
            lines.push({ text: lineText(buf, 0, n), offset });
            start = n;
          } else start = n; // a single line longer than the chunk: skipped
        }
        const events = this.handle(lines, { path: this.path, ino });
        offset += start;
        this.save(events, positionAt(offset));
      }
      return { done: false, offset };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/** Where a file's bytes come from: a descriptor (up to the size it had when looked at), a path, or a decompressed copy. */
interface OpenSource {
  readonly kind: 'open';
  readonly fd: number;
  readonly end: number;
}
interface BytesSource {
  readonly kind: 'bytes';
  readonly bytes: Buffer;
}
type Source = OpenSource | { readonly kind: 'path'; readonly path: string } | BytesSource;

function readChunk(source: Source, fd: number | undefined, buf: Buffer, offset: number): number {
  if (source.kind === 'bytes') return source.bytes.copy(buf, 0, offset, Math.min(source.bytes.length, offset + buf.length));
  if (source.kind === 'open') return offset >= source.end ? 0 : readSync(source.fd, buf, 0, Math.min(buf.length, source.end - offset), offset);
  return readSync(fd as number, buf, 0, buf.length, offset);
}
