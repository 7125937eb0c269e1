import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import { join } from 'node:path';
import { errorCode, errorMessage } from '../../util/caught.js';
import { SECOND_MS } from '../../util/duration.js';
import { schemaCheck, type Problem } from '../../util/schema-check.js';
import { readDuration } from '../../util/time-text.js';

export type FeedKind = 'tor' | 'blocklist' | 'hosting_asn';
export const FEED_KINDS: readonly FeedKind[] = ['tor', 'blocklist', 'hosting_asn'];

export interface FeedConfig {
  readonly file: string;
  readonly kind: FeedKind;
  readonly url?: string;
  /** Seconds between downloads, for operators who schedule updates. */
  readonly intervalSeconds?: number;
}

export interface Manifest {
  readonly feeds: readonly FeedConfig[];
  /** Problems found in feeds.json; the entries that were valid are still used. */
  readonly errors: readonly string[];
}

export const MANIFEST_FILE = 'feeds.json';

/** The kind of a feed without a manifest entry comes from its file name. */
export function kindFromName(file: string): FeedKind | undefined {
  if (file === 'tor-exit-nodes.txt') return 'tor';
  if (file === 'hosting-asns.txt') return 'hosting_asn';
  if ((file.startsWith('blocklist') && file.endsWith('.txt')) || file.endsWith('.netset')) return 'blocklist';
  return undefined;
}

/** Whole seconds of a positive duration as everywhere (util/time-text.ts): `6h`, `30m`, `600`. */
function parseInterval(value: unknown): number | undefined {
  const ms = readDuration(value);
  return ms === undefined || ms < SECOND_MS ? undefined : ms / SECOND_MS;
}

/** A plain file name inside the feeds folder: no folders, no hidden files. */
const SAFE_FILE = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';

/** One entry of `feeds.json`; members it does not name are ignored. */
const FeedEntry = Type.Object(
  {
    file: Type.String({ pattern: SAFE_FILE, message: '"file" must be a plain file name in the feeds folder' }),
    kind: Type.Optional(
      Type.Union(
        FEED_KINDS.map((k) => Type.Literal(k)),
        { message: `"kind" must be one of ${FEED_KINDS.join(', ')}` },
      ),
    ),
    url: Type.Optional(Type.String({ message: '"url" must be an http(s) URL' })),
    interval: Type.Optional(Type.Union([Type.Integer(), Type.String()], { message: '"interval" must be seconds or a duration like "6h"' })),
  },
  { message: 'must be an object {"file": …, "kind": …}' },
);
const checkEntry = schemaCheck(FeedEntry);
const checkDocument = schemaCheck(Type.Object({ feeds: Type.Array(Type.Unknown()) }));

/**
 * Reads `feeds.json`: `{"feeds": [{"file": "tor-exit-nodes.txt", "kind": "tor", "url": "https://…", "interval": "1h"}]}`.
 * A missing manifest is not an error. Invalid entries are reported and skipped.
 */
export async function readManifest(dir: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { feeds: [], errors: [] };
    return { feeds: [], errors: [`${MANIFEST_FILE}: ${errorMessage(err)}`] };
  }
  return parseManifest(text);
}

export function parseManifest(text: string): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { feeds: [], errors: [`${MANIFEST_FILE} is not valid JSON: ${errorMessage(err)}`] };
  }
  const document = checkDocument(doc);
  if (!document.ok) return { feeds: [], errors: [`${MANIFEST_FILE} must be {"feeds": [{"file": …, "kind": …}]}`] };
  const feeds: FeedConfig[] = [];
  const errors: string[] = [];
  document.value.feeds.forEach((raw, i) => {
    const where = `${MANIFEST_FILE} feeds[${i}]`;
    const checked = checkEntry(raw);
    // An entry is used whole or not at all: its first problem is reported.
    if (!checked.ok) return void errors.push(`${where}: ${(checked.errors[0] as Problem).message}`);
    const entry = checked.value;
    if (entry.file === MANIFEST_FILE) return void errors.push(`${where}: "file" must be a plain file name in the feeds folder`);
    const kind = entry.kind ?? kindFromName(entry.file);
    if (kind === undefined) return void errors.push(`${where}: "kind" must be one of ${FEED_KINDS.join(', ')}`);
    let url: string | undefined;
    if (entry.url !== undefined) {
      try {
        const parsed = new URL(entry.url);
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('protocol');
        url = parsed.toString();
      } catch {
        return void errors.push(`${where}: "url" must be an http(s) URL`);
      }
    }
    const intervalSeconds = entry.interval === undefined ? undefined : parseInterval(entry.interval);
    if (entry.interval !== undefined && intervalSeconds === undefined) return void errors.push(`${where}: "interval" must be seconds or a duration like "6h"`);
    feeds.push({ file: entry.file, kind, ...(url ? { url } : {}), ...(intervalSeconds ? { intervalSeconds } : {}) });
  });
  return { feeds, errors };
}
