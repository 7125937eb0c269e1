import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { updateFeeds } from '../../src/enrichment/feeds/update.js';

/** A local feed server: each path answers with a fixed status and body. */
const ROUTES: Record<string, { status: number; body: string }> = {
  '/tor': { status: 200, body: '# fresh\n185.220.101.5\n185.220.101.6\n' },
  '/netset': { status: 200, body: '1.2.3.0/24\n4.5.6.0/24\n' },
  '/asns': { status: 200, body: 'AS14061\n16509\n' },
  '/gone': { status: 404, body: 'not found' },
  '/html': { status: 200, body: '<html><body>Login required</body></html>' },
};

let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const route = ROUTES[req.url ?? ''];
    res.writeHead(route?.status ?? 500, { 'content-type': 'text/plain' });
    res.end(route?.body ?? 'error');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vigil-update-'));
  return () => rm(dir, { recursive: true, force: true });
});

const manifest = (feeds: object[]) => writeFile(join(dir, 'feeds.json'), JSON.stringify({ feeds }));

describe('updateFeeds', () => {
  it('downloads every feed with a URL and replaces its file', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '9.9.9.9\n');
    await manifest([
      { file: 'tor-exit-nodes.txt', kind: 'tor', url: `${base}/tor` },
      { file: 'level1.netset', kind: 'blocklist', url: `${base}/netset` },
      { file: 'hosting-asns.txt', kind: 'hosting_asn', url: `${base}/asns` },
      { file: 'local-blocklist.txt', kind: 'blocklist' },
    ]);
    const report = await updateFeeds(dir);
    expect(report).toMatchObject({ updated: 3, failed: 0, skipped: 1 });
    expect(report.feeds[0]).toMatchObject({ file: 'tor-exit-nodes.txt', outcome: 'updated', entries: 2, malformed: 0 });
    expect(report.feeds[2]).toMatchObject({ file: 'hosting-asns.txt', outcome: 'updated', entries: 2 });
    expect(await readFile(join(dir, 'tor-exit-nodes.txt'), 'utf8')).toBe(ROUTES['/tor']!.body);
    expect(await readFile(join(dir, 'level1.netset'), 'utf8')).toBe(ROUTES['/netset']!.body);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps the old file when the download fails or has no valid entries', async () => {
    await writeFile(join(dir, 'tor-exit-nodes.txt'), '9.9.9.9\n');
    await writeFile(join(dir, 'blocklist.txt'), '8.8.8.0/24\n');
    await manifest([
      { file: 'tor-exit-nodes.txt', kind: 'tor', url: `${base}/gone` },
      { file: 'blocklist.txt', kind: 'blocklist', url: `${base}/html` },
      { file: 'blocklist-2.txt', kind: 'blocklist', url: 'http://127.0.0.1:1/unreachable' },
    ]);
    const report = await updateFeeds(dir);
    expect(report).toMatchObject({ updated: 0, failed: 3 });
    expect(report.feeds[0]).toMatchObject({ outcome: 'failed', error: 'HTTP 404' });
    expect(report.feeds[1]).toMatchObject({ outcome: 'failed', malformed: 1 });
    expect(report.feeds[1]!.error).toMatch(/no valid entries/);
    expect(report.feeds[2]!.outcome).toBe('failed');
    expect(await readFile(join(dir, 'tor-exit-nodes.txt'), 'utf8')).toBe('9.9.9.9\n');
    expect(await readFile(join(dir, 'blocklist.txt'), 'utf8')).toBe('8.8.8.0/24\n');
    expect(await readdir(dir)).not.toContain('blocklist-2.txt');
  });

  it('uses the injected fetch', async () => {
    await manifest([{ file: 'tor-exit-nodes.txt', kind: 'tor', url: 'https://tor.example/list' }]);
    const seen: string[] = [];
    const fake = (async (url: string | URL | Request) => {
      seen.push(String(url));
      return new Response('1.1.1.1\n', { status: 200 });
    }) as typeof fetch;
    const report = await updateFeeds(dir, fake);
    expect(seen).toEqual(['https://tor.example/list']);
    expect(report.updated).toBe(1);
  });

  it('reports a missing or invalid manifest without failing', async () => {
    expect(await updateFeeds(dir)).toMatchObject({ updated: 0, failed: 0, skipped: 0, errors: [] });
    await writeFile(join(dir, 'feeds.json'), '{"feeds": 3}');
    expect((await updateFeeds(dir)).errors).toHaveLength(1);
  });
});
