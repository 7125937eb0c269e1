import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { EnrichmentLogger } from '../logger.js';
import { kindFromName, MANIFEST_FILE, readManifest, type FeedConfig } from './manifest.js';
import { parseAsnFeed, parseIpFeed } from './parse.js';
import { FeedSnapshot, type LoadedFeed } from './snapshot.js';
import { errorCode, errorMessage } from '../../util/caught.js';

export interface FeedStoreOptions {
  readonly dir: string;
  readonly logger: EnrichmentLogger;
  /** Watch the folder and reload on change (default true). */
  readonly watch?: boolean;
  /** Quiet time after the last change before reloading, so a file written in parts is read once (default 250 ms). */
  readonly debounceMs?: number;
}

interface FileState {
  readonly config: FeedConfig;
  readonly mtimeMs: number;
  readonly size: number;
  readonly feed: LoadedFeed;
}

interface FileStatus {
  readonly file: string;
  readonly kind: string;
  readonly entries: number;
  readonly malformed: number;
  readonly malformedSamples: readonly { line: number; text: string }[];
  readonly bytes: number;
  readonly modifiedAt?: string;
  readonly url?: string;
  readonly error?: string;
}

const isFeedName = (name: string) => !name.startsWith('.') && !name.endsWith('.tmp') && name !== MANIFEST_FILE;

/**
 * The threat-intel feeds of one folder. `snapshot` is replaced in one assignment after a reload
 * has read and compiled every file, so lookups never see a half-loaded set. Reloads are serialised;
 * requests made while one runs are served by a single follow-up reload.
 */
export class FeedStore {
  private current: FeedSnapshot = FeedSnapshot.EMPTY;
  private files = new Map<string, FileState>();
  private fileStatus: FileStatus[] = [];
  private manifestErrors: readonly string[] = [];
  private ignored: string[] = [];
  private loadedAt?: number;
  private reloads = 0;
  private lastError?: string;
  private chain: Promise<void> = Promise.resolve();
  private queued?: Promise<void>;
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly options: FeedStoreOptions) {}

  static async open(options: FeedStoreOptions): Promise<FeedStore> {
    const store = new FeedStore(options);
    await store.reload();
    if (options.watch !== false) store.startWatching();
    return store;
  }

  get snapshot(): FeedSnapshot {
    return this.current;
  }

  /** Calls `listener` after every completed reload; returns the unsubscribe function. */
  onReload(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reload(): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.chain.then(() => {
      this.queued = undefined;
      return this.loadAll();
    });
    this.queued = next;
    this.chain = next.catch(() => undefined);
    return next;
  }

  status(): Record<string, unknown> {
    return {
      dir: this.options.dir,
      loadedAt: this.loadedAt === undefined ? null : new Date(this.loadedAt).toISOString(),
      reloads: this.reloads,
      ranges: this.current.ranges,
      hostingAsns: this.current.hostingAsnCount,
      malformedLines: this.fileStatus.reduce((n, f) => n + f.malformed, 0),
      feeds: this.fileStatus,
      ignoredFiles: this.ignored,
      manifestErrors: this.manifestErrors,
      ...(this.lastError ? { error: this.lastError } : {}),
    };
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
  }

  private startWatching(): void {
    try {
      this.watcher = watch(this.options.dir, { persistent: false }, (_event, name) => {
        if (name && !isFeedName(name.toString()) && name.toString() !== MANIFEST_FILE) return;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 250);
        this.timer.unref();
      });
      this.watcher.on('error', (err) =>
        this.options.logger.warn({ err, dir: this.options.dir }, 'threat-intel feed folder watch failed; feeds will not reload'),
      );
    } catch (err) {
      this.options.logger.warn({ err, dir: this.options.dir }, 'cannot watch the threat-intel feed folder; feeds will not reload');
    }
  }

  private async configs(): Promise<FeedConfig[] | undefined> {
    let names: string[];
    try {
      names = (await readdir(this.options.dir)).filter(isFeedName).sort();
    } catch (err) {
      this.lastError = `cannot read ${this.options.dir}: ${errorMessage(err)}`;
      return undefined;
    }
    const manifest = await readManifest(this.options.dir);
    this.manifestErrors = manifest.errors;
    const declared = new Map(manifest.feeds.map((f) => [f.file, f]));
    const configs = [...manifest.feeds];
    this.ignored = [];
    for (const file of names) {
      if (declared.has(file)) continue;
      const kind = kindFromName(file);
      if (kind) configs.push({ file, kind });
      else this.ignored.push(file);
    }
    return configs;
  }

  private async loadAll(): Promise<void> {
    const configs = await this.configs();
    if (!configs) return; // the folder is unreadable: keep what we have
    const next = new Map<string, FileState>();
    const statuses: FileStatus[] = [];
    for (const config of configs) {
      const { state, status } = await this.loadFile(config);
      if (state) next.set(config.file, state);
      statuses.push(status);
    }
    const snapshot = FeedSnapshot.build([...next.values()].map((s) => s.feed));
    // The swap: everything above only built new values.
    this.current = snapshot;
    this.files = next;
    this.fileStatus = statuses;
    this.loadedAt = Date.now();
    this.lastError = undefined;
    this.reloads++;
    this.options.logger.info(
      { dir: this.options.dir, ranges: snapshot.ranges, hostingAsns: snapshot.hostingAsnCount, feeds: statuses.length },
      'threat-intel feeds loaded',
    );
    for (const listener of this.listeners) listener();
  }

  private async loadFile(config: FeedConfig): Promise<{ state?: FileState; status: FileStatus }> {
    const path = join(this.options.dir, config.file);
    const previous = this.files.get(config.file);
    const sameConfig = previous && previous.config.kind === config.kind;
    const base = { file: config.file, kind: config.kind, ...(config.url ? { url: config.url } : {}) };
    try {
      const info = await stat(path);
      if (sameConfig && previous.mtimeMs === info.mtimeMs && previous.size === info.size) {
        return { state: previous, status: statusOf(base, previous) };
      }
      const text = await readFile(path, 'utf8');
      const name = basename(config.file, extname(config.file));
      const feed: LoadedFeed =
        config.kind === 'hosting_asn'
          ? { file: config.file, name, kind: config.kind, asn: parseAsnFeed(text) }
          : { file: config.file, name, kind: config.kind, ip: parseIpFeed(text) };
      const state: FileState = { config, mtimeMs: info.mtimeMs, size: info.size, feed };
      const status = statusOf(base, state);
      if (status.malformed > 0)
        this.options.logger.warn(
          { file: config.file, malformed: status.malformed, samples: status.malformedSamples },
          'threat-intel feed has malformed lines (skipped)',
        );
      return { state, status };
    } catch (err) {
      const error = errorCode(err) === 'ENOENT' ? 'file not found' : errorMessage(err);
      // A file that became unreadable keeps its last good content; a deleted one is dropped.
      const kept = sameConfig && errorCode(err) !== 'ENOENT' ? previous : undefined;
      return { state: kept, status: { ...(kept ? statusOf(base, kept) : { ...base, entries: 0, malformed: 0, malformedSamples: [], bytes: 0 }), error } };
    }
  }
}

function statusOf(base: { file: string; kind: string; url?: string }, state: FileState): FileStatus {
  const parsed = state.feed.ip ?? state.feed.asn;
  const entries = state.feed.ip ? state.feed.ip.ranges.length : (state.feed.asn?.asns.length ?? 0);
  return {
    ...base,
    entries,
    malformed: parsed?.malformed ?? 0,
    malformedSamples: parsed?.samples ?? [],
    bytes: state.size,
    modifiedAt: new Date(state.mtimeMs).toISOString(),
  };
}
