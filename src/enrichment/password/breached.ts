import type { EnrichmentLogger } from '../logger.js';
import { shippedBreachedHashes } from './shipped-list.js';
import { SortedHashFile } from './sorted-hash-file.js';
import { errorMessage } from '../../util/caught.js';

const SHA1_HEX = /^[0-9a-fA-F]{40}$/;

/** The breached-password check. The hash itself is never kept, logged or returned. */
export class BreachedPasswords {
  private constructor(
    private readonly shipped: ReadonlySet<string>,
    private readonly file: SortedHashFile | undefined,
    private readonly fileError: string | undefined,
  ) {}

  static open(options: { hashFile?: string; logger: EnrichmentLogger }): BreachedPasswords {
    const shipped = shippedBreachedHashes();
    let file: SortedHashFile | undefined;
    let error: string | undefined;
    if (options.hashFile) {
      try {
        file = new SortedHashFile(options.hashFile);
      } catch (err) {
        error = errorMessage(err);
        options.logger.warn({ file: options.hashFile, err }, 'breached-password hash file cannot be opened; using the shipped list only');
      }
    }
    return new BreachedPasswords(shipped, file, error);
  }

  /** undefined when the value is not a SHA-1 hex string. */
  check(sha1: string): boolean | undefined {
    if (!SHA1_HEX.test(sha1)) return undefined;
    const lower = sha1.toLowerCase();
    if (this.shipped.has(lower)) return true;
    return this.file ? this.file.has(lower) : false;
  }

  status(): Record<string, unknown> {
    return {
      shippedHashes: this.shipped.size,
      file: this.file ? { path: this.file.path, bytes: this.file.size } : null,
      ...(this.fileError ? { fileError: this.fileError } : {}),
    };
  }

  close(): void {
    this.file?.close();
  }
}
