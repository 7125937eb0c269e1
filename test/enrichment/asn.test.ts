import { mkdtemp, readdir, rm, writeFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { openAsnDatabase } from '../../src/enrichment/geoip/asn.js';
import { defaultAsnCacheDir } from '../../src/enrichment/index.js';
import { parseAddress } from '../../src/util/ip.js';

let dir: string;
let cacheDir: string;
const V4 = [
  '16777216,16777471,13335,"Cloudflare, Inc."',
  '134744064,134744319,15169,Google LLC',
  '35309568,35313663,201907,"LLC ""SPUTNIK"""',
  'garbage line',
  '134744320,134744575,15169,Google LLC',
].join('\n');
const V6 = [
  '2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC',
  '2606:4700::,2606:4700:ffff:ffff:ffff:ffff:ffff:ffff,13335,"Cloudflare, Inc."',
].join('\r\n');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vigil-asn-'));
  cacheDir = join(dir, 'cache');
  await writeFile(join(dir, 'asn-ipv4-num.csv'), V4);
  await writeFile(join(dir, 'asn-ipv6.csv'), V6);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const expectations = async (db: Awaited<ReturnType<typeof openAsnDatabase>>) => {
  const at = (ip: string) => db.lookup(parseAddress(ip)!, ip);
  expect(at('1.0.0.1')).toEqual({ number: 13335, organization: 'Cloudflare, Inc.' });
  expect(at('8.8.8.8')).toEqual({ number: 15169, organization: 'Google LLC' });
  expect(at('8.8.9.1')).toBe(at('8.8.8.8')); // one shared object per (asn, organisation)
  expect(at('2.26.200.1')).toEqual({ number: 201907, organization: 'LLC "SPUTNIK"' });
  expect(at('2001:4860:4860::8888')?.number).toBe(15169);
  expect(at('2606:4700:4700::1111')?.organization).toBe('Cloudflare, Inc.');
  expect(at('9.9.9.9')).toBeUndefined();
  expect(at('2a00::1')).toBeUndefined();
};

describe('ASN CSV database', () => {
  it('reads ip-location-db CSVs (numeric IPv4, textual IPv6, quoted names) and counts bad lines', async () => {
    const db = await openAsnDatabase(dir);
    await expectations(db);
    expect(db.status()).toMatchObject({ ranges: { ipv4: 4, ipv6: 2 }, malformed: 1 });
  });

  it('caches the compiled table and reads it back on the next start', async () => {
    const first = await openAsnDatabase(dir, { cacheDir });
    expect(first.status()).toMatchObject({ fromCache: false });
    expect(await readdir(cacheDir)).toHaveLength(1);
    const second = await openAsnDatabase(dir, { cacheDir });
    expect(second.status()).toMatchObject({ fromCache: true, ranges: { ipv4: 4, ipv6: 2 } });
    await expectations(second);
  });

  it('ignores a corrupt cache and rebuilds when the source changes', async () => {
    await openAsnDatabase(dir, { cacheDir });
    const [file] = await readdir(cacheDir);
    await writeFile(join(cacheDir, file!), 'VIGIL-ASN-2\n\u0000\u0000');
    const rebuilt = await openAsnDatabase(dir, { cacheDir });
    expect(rebuilt.status()).toMatchObject({ fromCache: false });
    await expectations(rebuilt);
    await utimes(join(dir, 'asn-ipv6.csv'), new Date(), new Date(Date.now() + 5000));
    expect((await openAsnDatabase(dir, { cacheDir })).status()).toMatchObject({ fromCache: false });
    expect(await readdir(cacheDir)).toHaveLength(2);
  });
});

describe('the ASN cache a build prepares', () => {
  it('lives in node_modules/.cache/vigil beside installed ASN data, in the temp folder otherwise', () => {
    expect(defaultAsnCacheDir(join('/srv', 'app', 'node_modules', '@ip-location-db', 'asn'))).toBe(join('/srv', 'app', 'node_modules', '.cache', 'vigil'));
    expect(defaultAsnCacheDir(join('/srv', 'data', 'asn'))).toBe(join(tmpdir(), 'vigil-cache'));
  });

  it('vigil geoip prepare compiles the configured ASN data once; the next run finds it cached', async () => {
    const data = await mkdtemp(join(tmpdir(), 'vigil-asn-prepare-'));
    await writeFile(join(data, 'asn-ipv4-num.csv'), V4);
    const saved = process.env.VIGIL_GEOIP_ASN;
    process.env.VIGIL_GEOIP_ASN = data;
    try {
      const run = async () => {
        const out: string[] = [];
        expect(await runCli(['geoip', 'prepare'], (line) => out.push(line))).toBe(0);
        return out.join('\n');
      };
      const first = await run();
      expect(first).toMatch(/^ASN table compiled: ranges \{"ipv4":4,"ipv6":0\}, 3 ASNs, cache /);
      expect(await run()).toMatch(/^ASN table already cached/);
      await rm(first.slice(first.indexOf(', cache ') + ', cache '.length), { force: true });
    } finally {
      if (saved === undefined) delete process.env.VIGIL_GEOIP_ASN;
      else process.env.VIGIL_GEOIP_ASN = saved;
      await rm(data, { recursive: true, force: true });
    }
  });
});
