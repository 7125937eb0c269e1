/**
 * Micro benchmark of the classify -> enrich -> score path per event, with the shipped GeoIP/ASN
 * data and the fixture feeds, on a realistic mix (public IPv4/IPv6 logins, private addresses,
 * browser and tool user agents, emails, API requests). Also measures createEnrichment start-up.
 *   npx tsx bench/enrich.ts [events=200000]
 */
import { buildCatalog } from '../src/catalog/catalog.js';
import { createEnrichment } from '../src/enrichment/index.js';
import { DEFAULT_PLANS } from '../src/limits/plans.js';
import type { AccountContext } from '../src/event/account.js';
import { createClassifyStage } from '../src/pipeline/classify.js';
import { createScoreStage } from '../src/pipeline/score.js';
import type { ValidatedEvent } from '../src/event/types.js';
import { FIXTURE_INPUT } from '../test/catalog/fixture-input.js';

const total = Number(process.argv[2] ?? 200_000);
const logger = { warn: (o: object, m?: string) => console.warn(m, o), info: () => undefined };

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const enrichment = await createEnrichment({ feedsDir: new URL('../test/fixtures/feeds/', import.meta.url).pathname, logger, watchFeeds: false });
const startupMs = performance.now() - t0;
const startupCpu = process.cpuUsage(cpu0);

const classify = createClassifyStage(buildCatalog(FIXTURE_INPUT));
const score = createScoreStage();
const ctx: AccountContext = {
  account: { id: 'acc', name: 'a', plan: 'pro', createdAt: 0, settings: {} },
  plan: DEFAULT_PLANS.pro!,
  keyId: 'k',
  keyKind: 'secret',
};

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'curl/8.4.0',
  'python-requests/2.31.0',
  'sqlmap/1.7.2#stable (https://sqlmap.org)',
];
const rnd = (() => {
  let s = 42;
  return () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
})();
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
const publicV4 = () =>
  `${pick([8, 31, 45, 62, 81, 91, 104, 151, 185, 193, 203 - 100, 212])}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${1 + Math.floor(rnd() * 254)}`;
const publicV6 = () =>
  `${pick(['2a00:1450', '2001:4860', '2606:4700', '2a03:2880', '2a01:4f8', '2600:1f18'])}:${Math.floor(rnd() * 65536).toString(16)}::${Math.floor(rnd() * 65536).toString(16)}`;
const privateIp = () =>
  pick([
    `10.${Math.floor(rnd() * 256)}.0.${Math.floor(rnd() * 256)}`,
    `192.168.1.${Math.floor(rnd() * 256)}`,
    '127.0.0.1',
    `100.64.0.${Math.floor(rnd() * 256)}`,
  ]);

function makeEvent(i: number): ValidatedEvent {
  const r = rnd();
  const base = { occurredAt: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i, userAgent: pick(UAS), actorId: `user_${i % 5000}`, metadata: {} };
  if (r < 0.35)
    return {
      ...base,
      type: pick(['auth.login.success', 'auth.login.failure']),
      ip: publicV4(),
      email: `user${i % 5000}+tag@${pick(['gmail.com', 'example.com', 'mailinator.com', 'corp.io'])}`,
    };
  if (r < 0.5) return { ...base, type: 'auth.login.success', ip: publicV6(), email: `u${i % 3000}@example.org` };
  if (r < 0.65) return { ...base, type: pick(['data.accessed', 'admin.config.changed', 'account.updated']), ip: privateIp() };
  if (r < 0.9)
    return {
      ...base,
      type: 'api.request',
      ip: pick([publicV4(), publicV6()]),
      request: {
        method: pick(['GET', 'POST', 'DELETE']),
        path: pick(['/login', '/api/v1/orders', '/users/42', '/export', '/password/reset']),
        status: pick([200, 401, 403, 429]),
      },
      metadata: pick([{}, { rows: 100 }, { role: 'admin' }, { otp: true }]),
    };
  return {
    ...base,
    type: pick(['custom.checkout.completed', 'server.ssh.login.failure']),
    ip: pick([publicV4(), '185.220.101.1', '45.155.205.9']),
    passwordSha1: i % 7 === 0 ? '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8' : undefined,
  };
}

const events = Array.from({ length: 4096 }, (_, i) => makeEvent(i));
const run = (e: ValidatedEvent) => {
  const enriched = enrichment.enrich(classify(e));
  return score({ ...enriched, alerts: [] }, ctx).score;
};

// Warm-up: JIT and the user-agent cache.
let sink = 0;
for (let i = 0; i < 50_000; i++) sink += run(events[i % events.length] as ValidatedEvent);

const samples = new Float64Array(total);
const batchStart = performance.now();
for (let i = 0; i < total; i++) {
  const e = events[i % events.length] as ValidatedEvent;
  const s = performance.now();
  sink += run(e);
  samples[i] = (performance.now() - s) * 1000;
}
const wallUs = ((performance.now() - batchStart) * 1000) / total;
// CPU time is what this process used, whatever else the machine runs; it includes the timer calls.
const c0 = process.cpuUsage();
for (let i = 0; i < total; i++) sink += run(events[i % events.length] as ValidatedEvent);
const cpu = process.cpuUsage(c0);
const cpuUs = (cpu.user + cpu.system) / total;
const plainWallUs = ((performance.now() - batchStart) * 1000 - wallUs * total) / total;
samples.sort();
const q = (p: number) => (samples[Math.min(total - 1, Math.floor(p * total))] as number).toFixed(2);

// Lookup cost of the feed table alone, at 100k ranges.
const { FeedSnapshot } = await import('../src/enrichment/feeds/snapshot.js');
const { parseIpFeed } = await import('../src/enrichment/feeds/parse.js');
const { parseAddress } = await import('../src/util/ip.js');
const lines: string[] = [];
// 80k distinct IPv4 /24s and 20k IPv6 /48s, every other block, so none merge.
for (let i = 0; i < 80_000; i++) lines.push(`${20 + ((2 * i) >> 16)}.${((2 * i) >> 8) & 255}.${(2 * i) & 255}.0/24`);
for (let i = 0; i < 20_000; i++) lines.push(`2a00:${(2 * i).toString(16)}::/48`);
const snap = FeedSnapshot.build([{ file: 'blocklist.txt', name: 'blocklist', kind: 'blocklist', ip: parseIpFeed(lines.join('\n')) }]);
const probes = Array.from({ length: 4096 }, () =>
  parseAddress(
    rnd() < 0.8 ? `${20 + Math.floor(rnd() * 3)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.9` : `2a00:${Math.floor(rnd() * 40000).toString(16)}::1`,
  )!,
);
let hits = 0;
for (let i = 0; i < 200_000; i++) hits += snap.lookup(probes[i & 4095]!, undefined).blocklists.length;
const l0 = performance.now();
const lookups = 2_000_000;
for (let i = 0; i < lookups; i++) hits += snap.lookup(probes[i & 4095]!, undefined).blocklists.length;
const lookupNs = ((performance.now() - l0) * 1e6) / lookups;

console.log(
  JSON.stringify(
    {
      events: total,
      classifyEnrichScoreUs: {
        median: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        meanIncludingTimer: wallUs.toFixed(2),
        meanWallNoTimer: plainWallUs.toFixed(2),
        meanCpu: cpuUs.toFixed(2),
      },
      loadAverage: (await import('node:os'))
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' '),
      createEnrichmentStartupMs: Math.round(startupMs),
      createEnrichmentStartupCpuMs: Math.round((startupCpu.user + startupCpu.system) / 1000),
      startupParts: {
        geoipOpenMs: (enrichment.status() as Record<string, { openMs?: number }>).geoip?.openMs,
        asnOpenMs: (enrichment.status() as Record<string, { openMs?: number }>).asn?.openMs,
        feedsOpenMs: (enrichment.status() as Record<string, { openMs?: number }>).feeds?.openMs,
      },
      feedLookupNsAt100kRanges: lookupNs.toFixed(0),
      feedRanges: snap.ranges,
      sink: sink + hits > 0,
    },
    null,
    2,
  ),
);
await enrichment.close();
