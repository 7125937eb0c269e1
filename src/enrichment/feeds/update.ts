import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readManifest, type FeedConfig } from './manifest.js';
import { parseAsnFeed, parseIpFeed } from './parse.js';
import { errorMessage } from '../../util/caught.js';

export interface FeedUpdateResult {
  readonly file: string;
  readonly kind: string;
  readonly url?: string;
  /** `skipped`: no URL configured; `failed`: the old file (if any) was kept. */
  readonly outcome: 'updated' | 'failed' | 'skipped';
  readonly entries?: number;
  readonly malformed?: number;
  readonly bytes?: number;
  readonly error?: string;
}

export interface FeedUpdateReport {
  readonly dir: string;
  readonly updated: number;
  readonly failed: number;
  readonly skipped: number;
  readonly feeds: readonly FeedUpdateResult[];
  /** Problems in feeds.json. */
  readonly errors: readonly string[];
}
export type Report = FeedUpdateReport;

export interface FeedUpdateOptions {
  /** Per download (default 60 s). */
  readonly timeoutMs?: number;
  /** Largest accepted download (default 64 MiB). */
  readonly maxBytes?: number;
}

/**
 * `vigil feeds update`: downloads every feed of `feeds.json` that has a URL. A download replaces
 * its file atomically (temporary file, then rename) only when it succeeded and parsed to at least
 * one entry; on any failure the old file stays. The running service reloads on the rename.
 */
export async function updateFeeds(feedsDir: string, fetchImpl: typeof fetch = fetch, options: FeedUpdateOptions = {}): Promise<FeedUpdateReport> {
  const manifest = await readManifest(feedsDir);
  const feeds: FeedUpdateResult[] = [];
  for (const feed of manifest.feeds) {
    if (!feed.url) {
      feeds.push({ file: feed.file, kind: feed.kind, outcome: 'skipped' });
      continue;
    }
    feeds.push(await updateOne(feedsDir, feed as FeedConfig & { url: string }, fetchImpl, options));
  }
  const count = (o: FeedUpdateResult['outcome']) => feeds.filter((f) => f.outcome === o).length;
  return { dir: feedsDir, updated: count('updated'), failed: count('failed'), skipped: count('skipped'), feeds, errors: manifest.errors };
}

async function updateOne(dir: string, feed: FeedConfig & { url: string }, fetchImpl: typeof fetch, options: FeedUpdateOptions): Promise<FeedUpdateResult> {
  const base = { file: feed.file, kind: feed.kind, url: feed.url };
  const failed = (error: string): FeedUpdateResult => ({ ...base, outcome: 'failed', error });
  let text: string;
  try {
    const response = await fetchImpl(feed.url, { signal: AbortSignal.timeout(options.timeoutMs ?? 60_000), redirect: 'follow' });
    if (!response.ok) return failed(`HTTP ${response.status}`);
    const declared = Number(response.headers.get('content-length') ?? 0);
    const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    if (declared > maxBytes) return failed(`download is ${declared} bytes, more than ${maxBytes}`);
    text = await response.text();
    if (Buffer.byteLength(text) > maxBytes) return failed(`download is more than ${maxBytes} bytes`);
  } catch (err) {
    return failed(errorMessage(err));
  }
  const parsed = feed.kind === 'hosting_asn' ? parseAsnFeed(text) : parseIpFeed(text);
  const entries = 'asns' in parsed ? parsed.asns.length : parsed.ranges.length;
  if (entries === 0)
    return { ...failed(`no valid entries in the download (${parsed.malformed} malformed lines); kept the old file`), malformed: parsed.malformed };
  const target = join(dir, feed.file);
  const temporary = join(dir, `.${feed.file}.${process.pid}.tmp`);
  try {
    await writeFile(temporary, text);
    await rename(temporary, target);
  } catch (err) {
    await rm(temporary, { force: true });
    return failed(`cannot write ${target}: ${errorMessage(err)}`);
  }
  return { ...base, outcome: 'updated', entries, malformed: parsed.malformed, bytes: Buffer.byteLength(text) };
}
