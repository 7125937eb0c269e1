import { closeSync, openSync, readSync } from 'node:fs';
import type { EventBuffer } from '../buffer.js';
import type { AgentEvent } from '../event.js';
import type { Logger } from '../log.js';
import { findCopy, findRenamed, headOf, statOrUndefined, type FileMark } from '../util/rotation.js';

/** A complete line of a log file and the byte offset where it starts. */
export interface Line {
  readonly text: string;
  readonly offset: number;
}

/** Turns the lines of one chunk into events; `file` names the inode, for stable event ids. */
export type LineHandler = (lines: readonly Line[], file: { readonly path: string; readonly ino: number }) => AgentEvent[];

interface TailPosition {
  readonly ino: number;
  readonly offset: number;
  readonly head: string;
}

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
 * the new offset in the same transaction as the events those lines produced. Rotation by
 * rename or copytruncate is followed (the rest of the old file is read first, also when the
 * rotation happened while the agent was stopped); a truncated log is read again from 0.
 * The first time a file is seen it is read from its end: history is not replayed.
 */
export class FileTail {
  private readonly stateKey: string;

  constructor(
    readonly path: string,
    private readonly buffer: EventBuffer,
    private readonly handle: LineHandler,
    private readonly log: Logger,
    private readonly fromStart = false,
  ) {
    this.stateKey = `tail:${path}`;
  }

  poll(): void {
    const st = statOrUndefined(this.path);
    let pos = this.buffer.getState<TailPosition>(this.stateKey);
    if (pos === undefined) {
      if (st === undefined) return;
      pos = { ino: st.ino, offset: this.fromStart ? 0 : st.size, head: headOf(this.path) };
      this.buffer.append([], { [this.stateKey]: pos });
    }
    // A log first seen empty gets its first line remembered once it has one.
    if (pos.head === '' && st !== undefined && st.ino === pos.ino && st.size > 0) pos = { ...pos, head: headOf(this.path) };
    if (st === undefined || st.ino !== pos.ino) {
      // Rotated by rename (or moved away): finish the old file where it now lives, then start the new one.
      const renamed = findRenamed(this.path, pos.ino);
      if (renamed !== undefined && !this.drain(renamed, pos)) return;
      if (st === undefined) return;
      const head = headOf(this.path);
      // The same first line in a new inode: the log was rewritten in place (an editor, sed -i), not rotated.
      // Reading it again would resend old lines; the log-integrity source reports the rewrite.
      const offset = renamed === undefined && head !== '' && head === pos.head ? st.size : 0;
      this.buffer.append([], { [this.stateKey]: { ino: st.ino, offset, head } });
      this.log.info('log rotated; following the new file', { path: this.path, from_offset: offset });
      return this.poll();
    }
    // Truncated: shorter than what was read, or (truncated and refilled between two looks) starting with another first line.
    if (st.size < pos.offset || (pos.head !== '' && st.size > 0 && headOf(this.path) !== pos.head)) {
      // copytruncate: the copy holds the lines after our offset; read them from there first.
      const mark: FileMark = { ino: pos.ino, size: pos.offset, mtimeMs: 0, head: pos.head };
      const copy = findCopy(this.path, mark);
      if (copy !== undefined && !this.drain(copy, pos)) return;
      this.buffer.append([], { [this.stateKey]: { ino: st.ino, offset: 0, head: headOf(this.path) } });
      return this.poll();
    }
    if (st.size > pos.offset) this.read(this.path, pos, true);
  }

  /** Reads the rest of a rotated file; true once it is read to its end. */
  private drain(path: string, pos: TailPosition): boolean {
    return this.read(path, pos, false);
  }

  /** Reads complete lines from pos.offset, in chunks; returns true when the end was reached. */
  private read(path: string, pos: TailPosition, isCurrent: boolean): boolean {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      this.log.warn('cannot open log', { path, error: (err as Error).message });
      return true;
    }
    try {
      let offset = pos.offset;
      const buf = Buffer.alloc(CHUNK);
      while (!this.buffer.full) {
        const n = readSync(fd, buf, 0, CHUNK, offset);
        if (n === 0) return true;
        const complete = completeLines(buf, n, offset);
        const lines = complete.lines;
        let start = complete.consumed;
        if (lines.length === 0) {
          // An incomplete last line waits for its newline; a rotated file's last line never gets one.
          if (isCurrent) return true;
          if (n < CHUNK) {
            lines.push({ text: lineText(buf, 0, n), offset });
            start = n;
          } else start = n; // a single line longer than the chunk: skipped
        }
        const events = this.handle(lines, { path: this.path, ino: pos.ino });
        offset += start;
        this.buffer.append(events, { [this.stateKey]: { ...pos, offset } });
      }
      return false;
    } finally {
      closeSync(fd);
    }
  }
}
