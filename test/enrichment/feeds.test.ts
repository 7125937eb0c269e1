import { cp, mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FeedStore } from '../../src/enrichment/feeds/feed-store.js';
import { kindFromName, parseManifest } from '../../src/enrichment/feeds/manifest.js';
import { parseAsnFeed, parseIpFeed } from '../../src/enrichment/feeds/parse.js';
import { FeedSnapshot } from '../../src/enrichment/feeds/snapshot.js';
import { parseAddress } from '../../src/util/ip.js';

const FIXTURES = new URL('../fixtures/feeds/', import.meta.url).pathname;
const silent = { warn: () => undefined, info: () => undefined };
const addr = (ip: string) => parseAddress(ip)!;

describe('parseIpFeed', () => {
  it('reads addresses, CIDRs, ranges, IPv6, comments; counts malformed lines', () => {
    const feed = parseIpFeed(
      [
        '# header',
        '',
        '1.2.3.4',
        '10.0.0.0/8 # inline',
        '5.6.7.0/24 ; SBL1',
        '2001:db8::/32',
        '2001:db8:1::1',
        '9.9.9.1-9.9.9.9',
        '1.2.3',
        'hello',
        '1.2.3.4/40',
        '  8.8.8.8  ',
      ].join('\n'),
    );
    expect(feed.ranges).toEqual([
      { version: 4, bits: 32, first: 0x01020304, last: 0x01020304 },
      { version: 4, bits: 8, first: 0x0a000000, last: 0x0affffff },
      { version: 4, bits: 24, first: 0x05060700, last: 0x050607ff },
      { version: 6, bits: 32, first: 0x20010db8n << 96n, last: (0x20010db8n << 96n) | ((1n << 96n) - 1n) },
      { version: 6, bits: 128, first: 0x20010db8000100000000000000000001n, last: 0x20010db8000100000000000000000001n },
      { version: 4, first: 0x09090901, last: 0x09090909 },
      { version: 4, bits: 32, first: 0x08080808, last: 0x08080808 },
    ]);
    expect(feed.malformed).toBe(3);
    expect(feed.samples.map((s) => s.line)).toEqual([9, 10, 11]);
  });

  it('reads a FireHOL netset', () => {
    const feed = parseIpFeed('#\n# firehol_level1\n#\n0.0.0.0/8\n1.10.16.0/20\n223.254.0.0/16\n');
    expect(feed.ranges).toHaveLength(3);
    expect(feed.malformed).toBe(0);
  });

  it("reads Tor's exit-addresses format", () => {
    const text =
      'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E\nPublished 2024-01-01 00:00:00\nLastStatus 2024-01-01 01:00:00\nExitAddress 162.247.74.201 2024-01-01 01:04:35\n';
    const feed = parseIpFeed(text);
    expect(feed.ranges).toEqual([{ version: 4, bits: 32, first: 0xa2f74ac9, last: 0xa2f74ac9 }]);
    expect(feed.malformed).toBe(0);
  });

  it('handles CRLF line ends', () => {
    expect(parseIpFeed('1.1.1.1\r\n2.2.2.2\r\n').ranges).toHaveLength(2);
  });
});

describe('parseAsnFeed', () => {
  it('reads 13335, AS13335 and names; counts the rest', () => {
    const feed = parseAsnFeed('# hosting\nAS13335 Cloudflare\n16509\nas24940,Hetzner\nASX\n99999999999\n');
    expect(feed.asns).toEqual([13335, 16509, 24940]);
    expect(feed.malformed).toBe(2);
  });
});

describe('manifest and kinds', () => {
  it('takes the kind from the file name without a manifest', () => {
    expect(kindFromName('tor-exit-nodes.txt')).toBe('tor');
    expect(kindFromName('blocklist.txt')).toBe('blocklist');
    expect(kindFromName('blocklist-spamhaus.txt')).toBe('blocklist');
    expect(kindFromName('firehol_level2.netset')).toBe('blocklist');
    expect(kindFromName('hosting-asns.txt')).toBe('hosting_asn');
    expect(kindFromName('notes.txt')).toBeUndefined();
  });

  it('reads entries and reports invalid ones', () => {
    const m = parseManifest(
      JSON.stringify({
        feeds: [
          { file: 'tor-exit-nodes.txt', kind: 'tor', url: 'https://example.org/tor', interval: '1h' },
          { file: 'custom-list.txt', kind: 'blocklist', interval: 600 },
          { file: '../etc/passwd', kind: 'blocklist' },
          { file: 'x.txt', kind: 'nope' },
          { file: 'y.txt', kind: 'tor', url: 'ftp://example.org' },
        ],
      }),
    );
    expect(m.feeds).toEqual([
      { file: 'tor-exit-nodes.txt', kind: 'tor', url: 'https://example.org/tor', intervalSeconds: 3600 },
      { file: 'custom-list.txt', kind: 'blocklist', intervalSeconds: 600 },
    ]);
    expect(m.errors).toEqual([
      'feeds.json feeds[2]: "file" must be a plain file name in the feeds folder',
      'feeds.json feeds[3]: "kind" must be one of tor, blocklist, hosting_asn',
      'feeds.json feeds[4]: "url" must be an http(s) URL',
    ]);
    expect(parseManifest('{').errors[0]).toMatch(/not valid JSON/);
    expect(parseManifest('{"feeds": {}}').errors).toEqual(['feeds.json must be {"feeds": [{"file": …, "kind": …}]}']);
    const odd = parseManifest(
      JSON.stringify({ feeds: [null, { file: 'feeds.json' }, { file: 'notes.txt' }, { file: 'a.txt', kind: 'tor', interval: '5 minutes' }] }),
    );
    expect(odd).toEqual({
      feeds: [],
      errors: [
        'feeds.json feeds[0]: must be an object {"file": …, "kind": …}',
        'feeds.json feeds[1]: "file" must be a plain file name in the feeds folder',
        'feeds.json feeds[2]: "kind" must be one of tor, blocklist, hosting_asn',
        'feeds.json feeds[3]: "interval" must be seconds or a duration like "6h"',
      ],
    });
  });
});

describe('FeedSnapshot', () => {
  const snapshot = FeedSnapshot.build([
    { file: 'tor-exit-nodes.txt', name: 'tor-exit-nodes', kind: 'tor', ip: parseIpFeed('185.220.101.1\n2a0b:f4c2::1\n') },
    { file: 'blocklist-a.txt', name: 'blocklist-a', kind: 'blocklist', ip: parseIpFeed('185.220.101.0/24\n45.0.0.0/8\n') },
    { file: 'b.netset', name: 'b', kind: 'blocklist', ip: parseIpFeed('45.155.205.0/24\n2a0b::/16\n') },
    { file: 'hosting-asns.txt', name: 'hosting-asns', kind: 'hosting_asn', asn: parseAsnFeed('14061\n') },
  ]);

  it.each([
    ['185.220.101.1', { torExit: true, blocklists: ['blocklist-a'], hostingAsn: false }],
    ['185.220.101.2', { torExit: false, blocklists: ['blocklist-a'], hostingAsn: false }],
    ['45.155.205.9', { torExit: false, blocklists: ['b', 'blocklist-a'], hostingAsn: false }],
    ['45.155.206.9', { torExit: false, blocklists: ['blocklist-a'], hostingAsn: false }],
    ['46.0.0.1', { torExit: false, blocklists: [], hostingAsn: false }],
    ['2a0b:f4c2::1', { torExit: true, blocklists: ['b'], hostingAsn: false }],
    ['2a0b:f4c2::2', { torExit: false, blocklists: ['b'], hostingAsn: false }],
    ['2a0c::1', { torExit: false, blocklists: [], hostingAsn: false }],
  ])('%s', (ip, expected) => expect(snapshot.lookup(addr(ip), undefined)).toEqual(expected));

  it('flags hosting ASNs', () => {
    expect(snapshot.lookup(addr('46.0.0.1'), 14061).hostingAsn).toBe(true);
    expect(snapshot.lookup(addr('185.220.101.1'), 14061)).toEqual({ torExit: true, blocklists: ['blocklist-a'], hostingAsn: true });
    expect(snapshot.lookup(addr('46.0.0.1'), 15169).hostingAsn).toBe(false);
  });

  it('agrees with a naive scan on random overlapping lists', () => {
    const lists = Array.from({ length: 4 }, (_, l) =>
      Array.from({ length: 200 }, (_, i) => {
        const base = ((i * 2654435761 + l * 97) >>> 0) % 4096;
        const bits = 20 + ((i + l) % 13);
        return `10.${(base >> 4) & 255}.${(base & 15) * 16}.0/${bits}`.replace(/^10\./, `${(l % 2) + 44}.`);
      }),
    );
    const feeds = lists.map((lines, l) => ({
      file: `blocklist-${l}.txt`,
      name: `blocklist-${l}`,
      kind: 'blocklist' as const,
      ip: parseIpFeed(lines.join('\n')),
    }));
    const snap = FeedSnapshot.build(feeds);
    for (let k = 0; k < 3000; k++) {
      const v = (0x2c000000 + (((k * 2246822519) >>> 0) % 0x02000000)) >>> 0;
      const a = { version: 4 as const, w0: 0, w1: 0, w2: 0, w3: v };
      const expected = feeds.filter((f) => f.ip.ranges.some((r) => v >= (r.first as number) && v <= (r.last as number))).map((f) => f.name);
      expect(snap.lookup(a, undefined).blocklists).toEqual(expected);
    }
  });
});

describe('FeedStore', () => {
  let dir: string;
  let store: FeedStore | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vigil-feeds-'));
  });
  afterEach(async () => {
    store?.close();
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the fixture folder and reports per-file counts and malformed lines', async () => {
    await cp(FIXTURES, dir, { recursive: true });
    store = await FeedStore.open({ dir, logger: silent, watch: false });
    const status = store.status() as {
      feeds: { file: string; kind: string; entries: number; malformed: number; url?: string }[];
      malformedLines: number;
      hostingAsns: number;
    };
    const byFile = Object.fromEntries(status.feeds.map((f) => [f.file, f]));
    expect(byFile['tor-exit-nodes.txt']).toMatchObject({ kind: 'tor', entries: 6, malformed: 0, url: 'https://check.torproject.org/torbulkexitlist' });
    expect(byFile['blocklist-example.txt']).toMatchObject({ kind: 'blocklist', entries: 5, malformed: 2 });
    expect(byFile['firehol_level1.netset']).toMatchObject({ kind: 'blocklist', entries: 5, malformed: 0 });
    expect(byFile['hosting-asns.txt']).toMatchObject({ kind: 'hosting_asn', entries: 4, malformed: 1 });
    expect(status.malformedLines).toBe(3);
    expect(status.hostingAsns).toBe(4);
    const snap = store.snapshot;
    expect(snap.lookup(addr('185.220.101.33'), undefined).torExit).toBe(true);
    expect(snap.lookup(addr('2001:67c:e60:c0c:192:42:116:16'), undefined).torExit).toBe(true);
    expect(snap.lookup(addr('45.155.205.1'), undefined).blocklists).toEqual(['blocklist-example', 'firehol_level1']);
    expect(snap.lookup(addr('45.155.205.200'), undefined).blocklists).toEqual(['blocklist-example']);
    expect(snap.lookup(addr('103.251.167.15'), undefined).blocklists).toEqual(['blocklist-example']);
    expect(snap.lookup(addr('2a0e:1c80:1::5'), undefined).blocklists).toEqual(['blocklist-example']);
    expect(snap.lookup(addr('8.8.8.8'), 16509)).toEqual({ torExit: false, blocklists: [], hostingAsn: true });
  });

  it('ignores files it cannot classify and hidden temporary files', async () => {
    await writeFile(join(dir, 'notes.txt'), '1.2.3.4\n');
    await writeFile(join(dir, '.blocklist.txt.123.tmp'), '1.2.3.4\n');
    await writeFile(join(dir, 'blocklist.txt'), '5.6.7.8\n');
    store = await FeedStore.open({ dir, logger: silent, watch: false });
    expect(store.status()).toMatchObject({ ignoredFiles: ['notes.txt'], ranges: { ipv4: 1, ipv6: 0 } });
  });

  it('reloads when a file changes (watch)', async () => {
    await writeFile(join(dir, 'blocklist.txt'), '1.1.1.1\n');
    store = await FeedStore.open({ dir, logger: silent, debounceMs: 5 });
    expect(store.snapshot.lookup(addr('2.2.2.2'), undefined).blocklists).toEqual([]);
    const reloaded = new Promise<void>((resolve) => store!.onReload(resolve));
    await writeFile(join(dir, '.blocklist.txt.tmp'), '2.2.2.2\n');
    await rename(join(dir, '.blocklist.txt.tmp'), join(dir, 'blocklist.txt'));
    await reloaded;
    expect(store.snapshot.lookup(addr('2.2.2.2'), undefined).blocklists).toEqual(['blocklist']);
    expect(store.snapshot.lookup(addr('1.1.1.1'), undefined).blocklists).toEqual([]);
  });

  it('never exposes a half-loaded set while lookups run during reloads', async () => {
    const N = 3000;
    const listA = Array.from({ length: N }, (_, i) => `11.${i >> 8}.${i & 255}.1`);
    const listB = Array.from({ length: N }, (_, i) => `12.${i >> 8}.${i & 255}.1`);
    // Several files, so a reload spans many awaits (stat, read per file).
    const write = async (list: string[]) => {
      for (let f = 0; f < 6; f++) await writeFile(join(dir, `blocklist-${f}.txt`), list.filter((_, i) => i % 6 === f).join('\n'));
    };
    await write(listA);
    store = await FeedStore.open({ dir, logger: silent, watch: false });
    const A = listA.map(addr);
    const B = listB.map(addr);
    let observations = 0;
    let stop = false;
    const observe = async () => {
      while (!stop) {
        const snap = store!.snapshot;
        const hitsA = A.filter((a) => snap.lookup(a, undefined).blocklists.length > 0).length;
        const hitsB = B.filter((a) => snap.lookup(a, undefined).blocklists.length > 0).length;
        expect([hitsA, hitsB]).toSatisfy(([a, b]: number[]) => (a === N && b === 0) || (a === 0 && b === N));
        observations++;
        await new Promise((r) => setImmediate(r));
      }
    };
    const watcher = observe();
    for (let round = 0; round < 6; round++) {
      await write(round % 2 === 0 ? listB : listA);
      await store.reload();
    }
    stop = true;
    await watcher;
    expect(observations).toBeGreaterThan(6);
    expect((store.status() as { reloads: number }).reloads).toBe(7);
  });

  it('keeps serving the last good set when the folder disappears', async () => {
    await writeFile(join(dir, 'blocklist.txt'), '1.1.1.1\n');
    store = await FeedStore.open({ dir, logger: silent, watch: false });
    await rm(dir, { recursive: true });
    await store.reload();
    expect(store.snapshot.lookup(addr('1.1.1.1'), undefined).blocklists).toEqual(['blocklist']);
    expect(store.status()).toMatchObject({ error: expect.stringContaining('cannot read') });
  });

  it('coalesces reload requests made while one runs', async () => {
    await writeFile(join(dir, 'blocklist.txt'), '1.1.1.1\n');
    store = await FeedStore.open({ dir, logger: silent, watch: false });
    await Promise.all([store.reload(), store.reload(), store.reload(), store.reload()]);
    expect((store.status() as { reloads: number }).reloads).toBeLessThanOrEqual(3);
  });
});
