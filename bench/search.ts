/**
 * First-page latency of searches (GET /v1/events?q=…, the store's part of it) on a large
 * account: EVENTS stored events in one account (1,000,000 by default) plus NOISE in another,
 * over 30 days, on SQLite (a file, as the service keeps it) and PostgreSQL (a fresh schema,
 * dropped afterwards). Each query's first page (50 rows) is read RUNS times, round-robin over
 * the queries; median and p95 per query and store.
 *   npx tsx bench/search.ts
 *   EVENTS=200000 RUNS=9 STORES=sqlite npx tsx bench/search.ts
 *   KEEP=/tmp/search-bench PG_SCHEMA=vigil_search_kept npx tsx bench/search.ts
 *     (fills the SQLite file there and that PostgreSQL schema once and keeps them; later runs only measure)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../src/storage/postgres.js';
import { openSqliteStore } from '../src/storage/sqlite.js';
import type { Store } from '../src/storage/store.js';
import type { EventSort, NewEventRow } from '../src/storage/types.js';
import { eventSearchText } from '../src/storage/search-text.js';
import { newId } from '../src/util/ids.js';
import { EVENT_FIELDS, parseQuery } from '../src/util/search-query.js';

const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const NOISE = Number(process.env.NOISE ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 7);
const STORES = (process.env.STORES ?? 'sqlite,postgres').split(',');
const PG_URL = process.env.VIGIL_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const KEEP = process.env.KEEP;
const GROUP = 2_000;
const DAY = 86_400_000;
const ACCOUNT = 'acc_search';
const OTHER = 'acc_noise';

/** A deterministic pseudo-random sequence, so both stores hold the same events. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPES = ['auth.login.success', 'auth.login.failure', 'api.request', 'auth.logout', 'data.exported', 'auth.password.reset', 'custom.billing.refund'];
const WORDS = ['invoice', 'report', 'upload', 'profile', 'settings', 'payment', 'dashboard', 'search', 'export', 'review', 'comment', 'order'];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'curl/8.5.0',
];

/** One stored event as the pipeline writes it: the document with enrichment, risk and tags. */
function eventOf(accountId: string, at: number, rnd: () => number): NewEventRow {
  const id = newId('evt', at);
  const type = TYPES[Math.floor(rnd() ** 2 * TYPES.length)] as string;
  // dana.smith is one actor among 50,000 (about 1 event in 5,000); a handful look like her.
  const pick = rnd();
  const actor = pick < 0.0002 ? 'dana.smith' : pick < 0.0004 ? `danaher${Math.floor(rnd() * 5)}` : `user-${Math.floor(rnd() * 50_000)}`;
  const ip =
    rnd() < 0.3
      ? `10.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`
      : `198.51.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`;
  const risk = Math.min(100, Math.floor(rnd() ** 3 * 101));
  const note = rnd() < 0.0005 ? 'wire transfer approved' : `${WORDS[Math.floor(rnd() * WORDS.length)]} ${WORDS[Math.floor(rnd() * WORDS.length)]}`;
  const email = `${actor}@example.com`;
  const doc = {
    id,
    event: type,
    timestamp: new Date(at).toISOString(),
    received_at: new Date(at).toISOString(),
    actor_id: actor,
    email,
    ip,
    user_agent: AGENTS[Math.floor(rnd() * AGENTS.length)],
    session_id: `sess-${Math.floor(rnd() * 1e9).toString(36)}`,
    host: `web-${Math.floor(rnd() * 8)}`,
    request: { method: rnd() < 0.8 ? 'GET' : 'POST', path: `/${WORDS[Math.floor(rnd() * WORDS.length)]}/${Math.floor(rnd() * 1000)}`, status: 200 },
    metadata: { note, plan: 'pro', attempt: Math.floor(rnd() * 10) },
    classification: { predefined: true, base_score: 10, families: ['auth'] },
    enrichment: {
      network: { ip, version: 4, scope: 'public' },
      geo: { country: 'DE', city: 'Berlin', latitude: 52.52, longitude: 13.4 },
      asn: { number: 3320, organization: 'Deutsche Telekom AG' },
      user_agent: { browser: 'Chrome', os: 'Linux', family: 'Chrome/Linux', automated: false },
    },
    risk: { score: risk, level: risk >= 70 ? 'high' : 'low', action: 'allow', breakdown: [{ source: 'base', points: risk }] },
    tags: [],
    alerts: [],
  };
  return {
    id,
    accountId,
    type,
    eventId: null,
    occurredAt: at,
    receivedAt: at,
    actorId: actor,
    ip,
    riskScore: risk,
    tags: [],
    docJson: JSON.stringify(doc),
    searchText: eventSearchText(doc),
  };
}

async function fill(store: Store, accountId: string, count: number, seed: number, end: number): Promise<void> {
  const rnd = random(seed);
  const step = (30 * DAY) / count;
  const started = Date.now();
  for (let done = 0; done < count; done += GROUP) {
    const events: NewEventRow[] = [];
    for (let i = done; i < Math.min(count, done + GROUP); i++) events.push(eventOf(accountId, Math.floor(end - 30 * DAY + i * step), rnd));
    await store.commit({ events, alerts: [], usage: [], idempotency: [] });
    if ((done / GROUP) % 50 === 0) process.stdout.write(`\r  ${accountId}: ${done + events.length} events, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  process.stdout.write(`\r  ${accountId}: ${count} events in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const QUERIES: { name: string; q: string; sort?: EventSort }[] = [
  { name: 'newest first, no query', q: '' },
  { name: 'field (column)', q: 'actor_id:dana.smith' },
  { name: 'field (document)', q: 'email:dana.smith@example.com' },
  { name: 'wildcard prefix', q: 'actor_id:dana*' },
  { name: 'wildcard infix', q: 'actor_id:*ana.smi*' },
  { name: 'free text, rare', q: '"wire transfer"' },
  { name: 'free text, common', q: 'invoice' },
  { name: 'free text prefix', q: 'transf*' },
  { name: 'range + sort by risk', q: 'risk:>=90', sort: '-risk' },
  { name: 'CIDR', q: 'ip:10.0.0.0/8' },
  { name: 'type + time range', q: 'type:auth.login.failure occurred_at:[2026-01-01 TO *]' },
  { name: 'boolean', q: '(actor_id:dana* OR email:dana*) -type:api.request' },
  { name: 'infix in a document', q: 'email:*smith*' },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)] as number;

async function measure(name: string, store: Store, end: number): Promise<void> {
  const times = new Map<string, number[]>(QUERIES.map((q) => [q.name, []]));
  const rows = new Map<string, number>();
  for (let run = 0; run < RUNS; run++) {
    for (const query of QUERIES) {
      const parsed = parseQuery(query.q.replace('2026-01-01', new Date(end - 7 * DAY).toISOString().slice(0, 10)), EVENT_FIELDS);
      if (!parsed.ok) throw new Error(`${query.q}: ${parsed.message}`);
      const start = process.hrtime.bigint();
      try {
        const page = await store.events.listEvents(ACCOUNT, { query: parsed.query, sort: query.sort ?? '-occurred_at' }, 50);
        rows.set(query.name, page.items.length);
        if (page.items.some((e) => e.accountId !== ACCOUNT)) throw new Error('another account answered');
      } catch (err) {
        // PostgreSQL's statement timeout (30 s) ends a query that misses by far: it is reported, not fatal.
        if (!(err instanceof Error) || !/statement timeout/.test(err.message)) throw err;
        rows.set(query.name, -1);
      }
      (times.get(query.name) as number[]).push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  console.log(`\n${name}: first page (50) of ${EVENTS.toLocaleString('en')} events (+${NOISE.toLocaleString('en')} in another account), ${RUNS} runs`);
  for (const query of QUERIES) {
    const xs = times.get(query.name) as number[];
    console.log(
      `  ${query.name.padEnd(24)} ${`${query.q}${query.sort ? ` sort=${query.sort}` : ''}`.padEnd(58)} median ${median(xs).toFixed(1).padStart(7)} ms  p95 ${p95(xs).toFixed(1).padStart(7)} ms  rows ${rows.get(query.name) === -1 ? 'none: statement timeout' : rows.get(query.name)}`,
    );
  }
}

const end = Date.UTC(2026, 11, 1);
if (STORES.includes('sqlite')) {
  const dir = KEEP ?? mkdtempSync(join(tmpdir(), 'vigil-search-'));
  mkdirSync(dir, { recursive: true });
  const filled = KEEP !== undefined && existsSync(join(dir, 'vigil.db'));
  const store = openSqliteStore({ dataDir: dir, synchronous: 'normal' });
  try {
    await store.migrate();
    if (!filled) {
      console.log('SQLite: filling');
      await fill(store, ACCOUNT, EVENTS, 1, end);
      await fill(store, OTHER, NOISE, 2, end);
    }
    await measure('SQLite', store, end);
  } finally {
    await store.close();
    if (KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
if (STORES.includes('postgres')) {
  const schema = process.env.PG_SCHEMA ?? `vigil_search_${randomBytes(4).toString('hex')}`;
  const store = openPostgresStore(PG_URL, { schema, clock: { now: () => end } });
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: string }>('select count(*) as n from pg_tables where schemaname = $1 and tablename = $2', [
      schema,
      'vigil_migrations',
    ]);
    const filled = process.env.PG_SCHEMA !== undefined && Number(rows[0]?.n) > 0;
    await store.migrate();
    if (!filled) {
      await store.maintain(end - 31 * DAY);
      console.log('PostgreSQL: filling');
      await fill(store, ACCOUNT, EVENTS, 1, end);
      await fill(store, OTHER, NOISE, 2, end);
      await admin.query(`analyze "${schema}".events`);
    }
    await measure('PostgreSQL', store, end);
  } finally {
    await store.close();
    if (process.env.PG_SCHEMA === undefined) await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  }
}
