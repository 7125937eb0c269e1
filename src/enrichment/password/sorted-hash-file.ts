import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const NL = 10;
const WINDOW = 128;

/**
 * A large file of SHA-1 hashes sorted by hash, one a line, optionally followed by `:count`
 * (the Have I Been Pwned "ordered by hash" download). Searched on disk by binary search over
 * byte offsets (about 35 reads of 128 bytes for a billion lines); never loaded into memory.
 * Hex case in the file does not matter.
 */
export class SortedHashFile {
  private readonly fd: number;
  readonly size: number;
  private readonly buf = Buffer.alloc(WINDOW);
  private readonly target = Buffer.alloc(40);

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** `sha1` must be 40 hex characters. */
  has(sha1: string): boolean {
    this.target.write(sha1.toLowerCase(), 'latin1');
    let lo = 0; // always the start of a line
    let hi = this.size; // the wanted line, if present, starts before hi
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const line = this.lineAtOrAfter(mid);
      if (line < 0 || line >= hi) {
        hi = mid;
        continue;
      }
      const offset = line - this.windowStart;
      const cmp = this.compareAt(offset);
      if (cmp === 0) return true;
      if (cmp < 0) {
        const nl = this.buf.indexOf(NL, offset);
        if (nl < 0) return false; // a line longer than the window: not a hash file
        lo = this.windowStart + nl + 1;
      } else hi = line;
    }
    return false;
  }

  private windowStart = 0;
  private windowLength = 0;

  /** Reads a window at pos-1 and returns the offset of the first line starting at or after pos (-1 if none in the window). */
  private lineAtOrAfter(pos: number): number {
    const start = pos === 0 ? 0 : pos - 1;
    this.windowStart = start;
    this.windowLength = readSync(this.fd, this.buf, 0, WINDOW, start);
    if (pos === 0) return 0;
    const nl = this.buf.indexOf(NL);
    if (nl < 0 || nl >= this.windowLength) return -1;
    return start + nl + 1;
  }

  /** Compares the hash at buf[offset] with the target: <0 when the file's is smaller. */
  private compareAt(offset: number): number {
    if (offset + 40 > this.windowLength) return 1; // a truncated last line sorts after anything
    for (let i = 0; i < 40; i++) {
      let c = this.buf[offset + i] as number;
      if (c >= 65 && c <= 90) c |= 0x20;
      const t = this.target[i] as number;
      if (c !== t) return c - t;
    }
    return 0;
  }
}
