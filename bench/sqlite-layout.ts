/**
 * The SQLite writer's CPU per event for alternative events-table layouts, on a table that already
 * holds BENCH_ROWS events (default 1000000): the cost of an insert grows with the B-trees it
 * touches and with how many of their pages are out of the page cache, so an empty table flatters
 * every layout. Each layout gets its own database file (WAL, synchronous FULL, as the service
 * writes), filled once and kept in $TMPDIR/vigil-sqlite-layout/; the rounds then alternate the
 * layouts and report the median CPU (user + system of this single-threaded process) per event.
 *   npx tsx bench/sqlite-layout.ts
 *   BENCH_ROWS=200000 BENCH_GROUP=100 BENCH_GROUPS=200 BENCH_ROUNDS=5 npx tsx bench/sqlite-layout.ts
 *   BENCH_LAYOUTS=0,3 (the layouts' numbers in the table, default all)
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { benchEvent } from './workload.js';
import { newId } from '../src/util/ids.js';
import { hourOf, SummaryHours } from '../src/storage/event-hours.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const GROUP = Number(process.env.BENCH_GROUP ?? 100);
const GROUPS = Number(process.env.BENCH_GROUPS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ACCOUNT = 'acc_01JBENCHBENCHBENCHBENCHBEN';

const COLUMNS = ['id', 'account_id', 'type', 'event_id', 'occurred_at', 'received_at', 'actor_id', 'ip', 'risk_score', 'tags', 'doc'];
const TABLE_COLUMNS =
  'id text not null, account_id text not null, type text not null, event_id text, occurred_at bigint not null, received_at bigint not null, ' +
  'actor_id text, ip text, risk_score integer not null, tags text not null, doc text not null';

interface Layout {
  readonly name: string;
  readonly ddl: readonly string[];
  /** Page cache of the writing connection, in KiB (SQLite's default is 2000). */
  readonly cacheKib: number;
  /** Page size of a new database file (SQLite's default is 4096). */
  readonly pageSize?: number;
  /** WAL pages that trigger a checkpoint (SQLite's default is 1000). */
  readonly autocheckpoint?: number;
  /**
   * Actor and address entries go to a side table (event_subjects) in one sorted transaction every
   * this many groups, instead of to an index per row: the deferred-index design.
   */
  readonly deferSubjectsEvery?: number;
  /**
   * Actor and address hours go to the per-hour summaries the service writes (event_actor_hours,
   * event_ip_hours), skipped when the writer's in-memory set already holds them.
   */
  readonly summaryHours?: boolean;
}

const CURRENT = [
  `create table events (${'id text primary key'}${TABLE_COLUMNS.slice('id text not null'.length)})`,
  'create index events_account_id on events (account_id, id)',
  'create index events_account_type on events (account_id, type, id)',
  'create index events_account_actor on events (account_id, actor_id, id)',
  'create index events_account_ip on events (account_id, ip, id)',
  'create index events_account_received on events (account_id, received_at)',
];

const INDEXES_BY_FILTER = [
  'create index events_account_type on events (account_id, type, id)',
  'create index events_account_actor on events (account_id, actor_id, id)',
  'create index events_account_ip on events (account_id, ip, id)',
];

const SUMMARIES = [
  'create table event_actor_hours (account_id text not null, actor text not null, hour integer not null, primary key (account_id, actor, hour)) without rowid',
  'create table event_ip_hours (account_id text not null, address text not null, hour integer not null, primary key (account_id, address, hour)) without rowid',
];

const LAYOUTS: readonly Layout[] = [
  {
    name: 'text key, 5 indexes, 2 MB cache',
    cacheKib: 2000,
    ddl: [
      `create table events (${TABLE_COLUMNS.replace('id text not null', 'id text primary key')})`,
      'create index events_account_id on events (account_id, id)',
      ...INDEXES_BY_FILTER,
      'create index events_account_received on events (account_id, received_at)',
    ],
  },
  {
    name: 'text key, 5 indexes, 64 MB cache',
    cacheKib: 65536,
    ddl: [
      `create table events (${TABLE_COLUMNS.replace('id text not null', 'id text primary key')})`,
      'create index events_account_id on events (account_id, id)',
      ...INDEXES_BY_FILTER,
      'create index events_account_received on events (account_id, received_at)',
    ],
  },
  {
    name: 'rowid, 4 indexes, 64 MB cache',
    cacheKib: 65536,
    ddl: [
      `create table events (seq integer primary key, ${TABLE_COLUMNS})`,
      'create unique index events_account_id on events (account_id, id)',
      ...INDEXES_BY_FILTER,
    ],
  },
  {
    name: 'rowid, 2 indexes (no actor, ip), 64 MB cache',
    cacheKib: 65536,
    ddl: [
      `create table events (seq integer primary key, ${TABLE_COLUMNS})`,
      'create unique index events_account_id on events (account_id, id)',
      INDEXES_BY_FILTER[0] as string,
    ],
  },
  { name: 'text key, 5 indexes, 1 KB pages', cacheKib: 2000, pageSize: 1024, ddl: CURRENT },
  { name: 'text key, 5 indexes, checkpoint every 10000 pages', cacheKib: 65536, autocheckpoint: 10_000, ddl: CURRENT },
  {
    name: 'rowid, 2 indexes + actor/ip entries written sorted every 50 groups',
    cacheKib: 65536,
    deferSubjectsEvery: 50,
    ddl: [
      `create table events (seq integer primary key, ${TABLE_COLUMNS})`,
      'create unique index events_account_id on events (account_id, id)',
      INDEXES_BY_FILTER[0] as string,
      'create table event_subjects (account_id text not null, kind integer not null, value text not null, id text not null, primary key (account_id, kind, value, id)) without rowid',
    ],
  },
  {
    name: 'the service: text key, (account, received_at, actor, ip) instead of actor and ip indexes + per-hour actor/ip summaries, 2 MB cache',
    cacheKib: 2000,
    summaryHours: true,
    ddl: [
      ...CURRENT.filter((ddl) => !ddl.includes('_actor ') && !ddl.includes('_ip ') && !ddl.includes('_received ')),
      'create index events_account_received on events (account_id, received_at, actor_id, ip)',
      ...SUMMARIES,
    ],
  },
];

/** Per layout, as the writer thread keeps it for its lifetime: the rounds share it. */
const summaryCaches = new Map<Layout, SummaryHours>();

/** The summary writes of the service's writer: a statement only for a pair new in its hour. */
function summaryWriter(db: SqliteDatabase.Database, layout: Layout): ((row: unknown[]) => void) | undefined {
  if (layout.summaryHours !== true) return undefined;
  const actor = db.prepare('insert or ignore into event_actor_hours (account_id, actor, hour) values (?, ?, ?)');
  const address = db.prepare('insert or ignore into event_ip_hours (account_id, address, hour) values (?, ?, ?)');
  let cache = summaryCaches.get(layout);
  if (cache === undefined) summaryCaches.set(layout, (cache = new SummaryHours()));
  const hours = cache;
  return (row) => {
    const hour = hourOf(row[5] as number);
    const accountId = String(row[1]);
    for (const [kind, value, statement] of [
      ['actor', row[6], actor],
      ['ip', row[7], address],
    ] as const) {
      if (value === null) continue;
      const text = String(value);
      if (hours.has(hour, kind, accountId, text)) continue;
      statement.run(row[1], value, hour);
      hours.add(hour, kind, accountId, text);
    }
  };
}

/** The i-th event as statement parameters, with a document of the stored size (about 1 KB). */
function params(i: number, now: number): unknown[] {
  const e = benchEvent(i) as { event: string; actor_id?: string; ip?: string };
  const id = newId('evt', now);
  const doc = {
    id,
    ...e,
    received_at: new Date(now).toISOString(),
    classification: { predefined: true, base_score: 10, families: ['authentication'] },
    enrichment: {
      geo: { country: 'DE', city: 'Berlin', lat: 52.52, lon: 13.4, accuracy_radius_km: 20 },
      asn: { number: 3320, org: 'Deutsche Telekom AG', network: '80.128.0.0/11', hosting: false },
      threat_intel: { tor_exit: false, listed: [] },
      user_agent: { browser: 'Chrome', version: '124', os: 'Windows', device: 'desktop', bot: false },
    },
    risk: { score: i % 100, level: 'low', action: 'allow', breakdown: [{ source: 'base', points: 10 }] },
    tags: [],
    alerts: [],
  };
  return [id, ACCOUNT, e.event, null, now - 1000, now, e.actor_id ?? null, e.ip ?? null, i % 100, '[]', JSON.stringify(doc)];
}

function open(file: string, layout: Layout): SqliteDatabase.Database {
  const db = new SqliteDatabase(file);
  if (layout.pageSize !== undefined) db.pragma(`page_size = ${layout.pageSize}`);
  if (layout.autocheckpoint !== undefined) db.pragma(`wal_autocheckpoint = ${layout.autocheckpoint}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`cache_size = -${layout.cacheKib}`);
  return db;
}

function insertStatement(db: SqliteDatabase.Database): SqliteDatabase.Statement {
  return db.prepare(`insert into events (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
}

function subjectStatement(db: SqliteDatabase.Database): SqliteDatabase.Statement {
  return db.prepare('insert into event_subjects (account_id, kind, value, id) values (?, ?, ?, ?)');
}

/** The side-table entries of an event's parameters: its actor (kind 0) and address (kind 1). */
function subjectsOf(row: unknown[]): unknown[][] {
  const out: unknown[][] = [];
  if (row[6] !== null) out.push([row[1], 0, row[6], row[0]]);
  if (row[7] !== null) out.push([row[1], 1, row[7], row[0]]);
  return out;
}

/** The layout's database holding ROWS events: filled once, then reused. */
function filled(layout: Layout, index: number): string {
  const dir = join(tmpdir(), 'vigil-sqlite-layout');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `layout${index}-${ROWS}.db`);
  if (existsSync(file)) return file;
  const filling = `${file}.filling`;
  rmSync(filling, { force: true });
  const db = open(filling, layout);
  for (const statement of layout.ddl) db.exec(statement);
  const insert = insertStatement(db);
  const subjects = layout.deferSubjectsEvery === undefined ? undefined : subjectStatement(db);
  const summarise = summaryWriter(db, layout);
  const chunk = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const row = params(i, Date.now());
      insert.run(row);
      if (subjects) for (const entry of subjectsOf(row)) subjects.run(entry);
      summarise?.(row);
    }
  });
  for (let i = 0; i < ROWS; i += 10_000) chunk(i, Math.min(ROWS, i + 10_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  renameSync(filling, file);
  return file;
}

/** CPU µs per event of GROUPS transactions of GROUP events on the layout's filled database. */
function measure(file: string, layout: Layout, first: number): number {
  const db = open(file, layout);
  const insert = insertStatement(db);
  const summarise = summaryWriter(db, layout);
  const commit = db.transaction((rows: unknown[][]) => {
    for (const row of rows) {
      insert.run(row);
      summarise?.(row);
    }
  }).immediate;
  const groups = Array.from({ length: GROUPS }, (_, g) => Array.from({ length: GROUP }, (__, k) => params(first + g * GROUP + k, Date.now())));
  const every = layout.deferSubjectsEvery;
  const subjects = every === undefined ? undefined : subjectStatement(db);
  const flush =
    subjects &&
    db.transaction((entries: unknown[][]) => {
      for (const entry of entries) subjects.run(entry);
    }).immediate;
  const pending: unknown[][] = [];
  const key = (e: unknown[]) => `${String(e[0])}\u0000${String(e[1])}\u0000${String(e[2])}\u0000${String(e[3])}`;
  const started = process.cpuUsage();
  groups.forEach((rows, g) => {
    commit(rows);
    if (flush === undefined || every === undefined) return;
    for (const row of rows) pending.push(...subjectsOf(row));
    if ((g + 1) % every === 0 || g === groups.length - 1) {
      flush(pending.sort((a, b) => (key(a) < key(b) ? -1 : 1)));
      pending.length = 0;
    }
  });
  const used = process.cpuUsage(started);
  db.close();
  return (used.user + used.system) / (GROUPS * GROUP);
}

const only = process.env.BENCH_LAYOUTS?.split(',').map(Number);
const chosen = LAYOUTS.map((_, i) => i).filter((i) => only === undefined || only.includes(i));
const files = LAYOUTS.map((layout, i) => {
  if (!chosen.includes(i)) return '';
  const started = Date.now();
  const file = filled(layout, i);
  console.log(`${layout.name}: ${file} (${Math.round((Date.now() - started) / 1000)} s to prepare)`);
  return file;
});
const results = LAYOUTS.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) {
  const order = [...chosen];
  if (round % 2 === 1) order.reverse();
  for (const i of order) {
    const us = measure(files[i] as string, LAYOUTS[i] as Layout, ROWS + 10_000_000 + round * GROUPS * GROUP);
    results[i]?.push(us);
    console.log(`round ${round + 1} ${(LAYOUTS[i] as Layout).name}: ${us.toFixed(1)} µs/event`);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.table(chosen.map((i) => ({ layout: (LAYOUTS[i] as Layout).name, 'writer CPU µs/event (median)': Math.round(median(results[i] ?? []) * 10) / 10 })));
