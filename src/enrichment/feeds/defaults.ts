import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE, type FeedKind } from './manifest.js';

/**
 * Well-known public feeds, downloaded by `vigil feeds update`: nothing ships with their data,
 * because it goes stale within hours. Each is free to use; the operator decides how often to run it.
 */
export interface DefaultFeed {
  readonly file: string;
  readonly kind: FeedKind;
  readonly url: string;
  /** How often the source refreshes it, for operators who schedule updates. */
  readonly interval: string;
  readonly about: string;
}

export const DEFAULT_FEEDS: readonly DefaultFeed[] = [
  {
    file: 'tor-exit-nodes.txt',
    kind: 'tor',
    url: 'https://check.torproject.org/torbulkexitlist',
    interval: '1h',
    about: 'Tor Project: current Tor exit addresses',
  },
  {
    file: 'firehol_level1.netset',
    kind: 'blocklist',
    url: 'https://iplists.firehol.org/files/firehol_level1.netset',
    interval: '24h',
    about: 'FireHOL level 1: attacks, malware and bogons, few false positives',
  },
  {
    file: 'blocklist-spamhaus-drop.txt',
    kind: 'blocklist',
    url: 'https://www.spamhaus.org/drop/drop.txt',
    interval: '24h',
    about: "Spamhaus DROP: netblocks hijacked or leased by criminals (free for an organisation's own use)",
  },
];

/** The default feeds.json, in the format readManifest reads. */
export function defaultManifest(): string {
  return JSON.stringify({ feeds: DEFAULT_FEEDS }, null, 2) + '\n';
}

/**
 * Creates the feeds folder if needed and writes the default feeds.json when it has none (an
 * existing manifest is the operator's and is never replaced). True when it wrote the manifest.
 */
export async function prepareFeedsDir(dir: string): Promise<boolean> {
  await mkdir(dir, { recursive: true });
  try {
    await writeFile(join(dir, MANIFEST_FILE), defaultManifest(), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}
