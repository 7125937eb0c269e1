import { accessSync, constants, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { roomyApp } from './support.js';

type Json = any;

/**
 * What an erasure leaves in storage beyond what queries answer: on SQLite the bytes of the
 * database file and its WAL; on PostgreSQL, that every relation it wrote was VACUUMed, and with
 * VIGIL_ERASURE_REWRITE=on rewritten, then the bytes of those relations' files. The
 * subject's identifiers are the same in both accounts; so that a scan can tell the accounts'
 * copies apart, every event also carries each identifier after its account's id
 * (`<account id> <identifier>`), and account A knows the subject by one more identifier that
 * account B never saw.
 */
const ACTOR = 'zqbytesdanaz';
const EMAIL = 'Dana.Bytes@example.org';
const IP = '198.51.100.77';
const DEVICE = 'devzqbytes4417';
const SHARED = [ACTOR, EMAIL, IP, DEVICE];
/** A's subject also acted under this id; B never saw it, so no byte of it may be left anywhere. */
const ALIAS_A = 'zqaliasonlyinaq';
const FILLER = 'x'.repeat(180);

const IDENTIFIERS = [
  { kind: 'actor_id', value: ACTOR },
  { kind: 'email', value: EMAIL },
  { kind: 'ip', value: IP },
  { kind: 'device_id', value: DEVICE },
  { kind: 'actor_id', value: ALIAS_A },
];

const tagged = (accountId: string) => SHARED.map((value) => `${accountId} ${value}`);

function subjectEvent(accountId: string, n: number, alias: boolean): Json {
  return {
    event: n % 3 === 0 ? 'auth.login.success' : 'auth.login.failure',
    actor_id: alias ? ALIAS_A : ACTOR,
    email: EMAIL,
    ip: IP,
    metadata: { device_id: DEVICE, seen: tagged(accountId), n, pad: FILLER },
  };
}

const otherEvent = (n: number, actor = `someone${n % 97}`): Json => ({
  event: 'auth.login.success',
  actor_id: actor,
  ip: `203.0.113.${n % 200}`,
  metadata: { n, pad: FILLER },
});

interface StoredFile {
  readonly name: string;
  readonly bytes: Buffer;
  /** What holds the byte at an offset (SQLite's database file: the table or index of its page). */
  readonly holder?: (offset: number) => string;
}

/** Where `needle`'s UTF-8 bytes occur in the files: file and, where known, the table or index holding them. */
function occurrences(files: readonly StoredFile[], needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  const found: string[] = [];
  for (const f of files)
    for (let at = f.bytes.indexOf(bytes); at >= 0; at = f.bytes.indexOf(bytes, at + 1)) found.push(f.holder ? `${f.name} (${f.holder(at)})` : f.name);
  return [...new Set(found)];
}

/** The suite runs with the relations' rewrite off (both modes) and on (PostgreSQL, where it changes what the erasure does). */
const REWRITE_MODES = SCALE_OUT ? ['off', 'on'] : ['off'];

describe.each(REWRITE_MODES)('data subjects: what an erasure leaves in the stored files (VIGIL_ERASURE_REWRITE=%s)', (rewrite) => {
  let t: TestApp;
  let dataDir: string;
  let a: { id: string; secret: string };
  let b: { id: string; secret: string };
  let aSubjects: string;

  const call = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });

  async function batch(key: string, events: Json[]): Promise<void> {
    const res = await call(key, 'POST', '/v1/events/batch', { events });
    expect(res.statusCode, res.body).toBe(202);
  }

  async function erase(key: string, identifiers: readonly { kind: string; value: string }[]): Promise<Json> {
    const res = await call(key, 'POST', '/v1/subjects/erase', { identifiers });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().job.id as string;
    let job: Json;
    await until(
      async () => {
        job = (await call(key, 'GET', `/v1/subjects/jobs/${id}`)).json().job;
        return job.status === 'done';
      },
      'erasure job done',
      60_000,
    );
    // The job's own row is scrubbed after it is marked done.
    await t.vigil.erasures.idle();
    return job;
  }

  const db = () => (t.services.store as unknown as { db: Kysely<any> }).db;

  /** SQLite: the database file (with the table or index of each page) and its WAL. */
  async function storedFiles(): Promise<StoredFile[]> {
    const file = join(dataDir, 'vigil.db');
    const pageSize = (await sql<{ page_size: number }>`pragma page_size`.execute(db())).rows[0]!.page_size;
    const pages = new Map((await sql<{ name: string; pageno: number }>`select name, pageno from dbstat`.execute(db())).rows.map((r) => [r.pageno, r.name]));
    const holder = (offset: number) => pages.get(Math.floor(offset / pageSize) + 1) ?? 'free page';
    const files: StoredFile[] = [{ name: 'vigil.db', bytes: readFileSync(file), holder }];
    if (existsSync(`${file}-wal`)) files.push({ name: 'vigil.db-wal', bytes: readFileSync(`${file}-wal`) });
    return files;
  }

  /** PostgreSQL: how many times each table of the schema (partitions included) was vacuumed by a command. */
  async function vacuumCounts(): Promise<Map<string, number>> {
    const rows = (
      await sql<{ name: string; n: string }>`select relname as name, vacuum_count as n from pg_stat_user_tables where schemaname = current_schema()`.execute(
        db(),
      )
    ).rows;
    return new Map(rows.map((r) => [r.name, Number(r.n)]));
  }

  /** PostgreSQL: each table of the schema (partitions included) by the number of the file it is stored in, which a rewrite changes. */
  async function fileNumbers(): Promise<Map<string, string>> {
    const rows = (
      await sql<{ name: string; file: string }>`select relname as name, relfilenode::text as file from pg_class
        where relnamespace = current_schema()::regnamespace and relkind = 'r'`.execute(db())
    ).rows;
    return new Map(rows.map((r) => [r.name, r.file]));
  }

  /**
   * PostgreSQL: the files of these tables, of their TOAST tables and of all their indexes, every
   * segment, after a CHECKPOINT has written the shared buffers out; or why they cannot be read
   * (this process may not read the server's data directory).
   */
  async function relationFiles(tables: readonly string[]): Promise<StoredFile[] | string> {
    let dataDirectory: string;
    try {
      dataDirectory = (await sql<{ data_directory: string }>`show data_directory`.execute(db())).rows[0]!.data_directory;
      accessSync(dataDirectory, constants.R_OK | constants.X_OK);
      await sql`checkpoint`.execute(db());
    } catch (err) {
      return `the server's data directory cannot be read from this process (${(err as Error).message})`;
    }
    const rows = (
      await sql<{ name: string; path: string }>`with tables as (
          select c.oid, c.reltoastrelid from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relname in (${sql.join(tables)})
        ), relations as (
          select oid from tables
          union select reltoastrelid from tables where reltoastrelid <> 0
          union select i.indexrelid from pg_index i where i.indrelid in (select oid from tables union select reltoastrelid from tables)
        )
        select r.oid::regclass::text as name, pg_relation_filepath(r.oid) as path from relations r`.execute(db())
    ).rows;
    const files: StoredFile[] = [];
    for (const row of rows)
      for (let segment = 0; ; segment++) {
        const file = join(dataDirectory, segment === 0 ? row.path : `${row.path}.${segment}`);
        if (!existsSync(file)) break;
        files.push({ name: segment === 0 ? row.name : `${row.name}.${segment}`, bytes: readFileSync(file) });
      }
    return files;
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-erase-bytes-'));
    // A database file, so commits go through the writer thread and checkpoints through its thread.
    t = await roomyApp({ VIGIL_DATA_DIR: dataDir, VIGIL_SQLITE_SYNCHRONOUS: 'normal', VIGIL_ERASURE_REWRITE: rewrite });
    a = await t.account('pro');
    b = await t.account('pro');
    const res = await call(a.secret, 'POST', '/v1/keys', { name: 'privacy', scopes: ['subjects'] });
    expect(res.statusCode, res.body).toBe(201);
    aSubjects = res.json().key as string;

    // Many commit groups from both accounts, interleaved, so that pages of the events table, its
    // indexes and the full-text segments split, merge and move cells while both accounts' rows
    // are on them.
    let n = 0;
    for (let round = 0; round < 24; round++) {
      for (const acct of [a, b]) {
        const events = Array.from({ length: 100 }, (_, i) => {
          n++;
          if (i % 4 !== 0) return otherEvent(n, round % 5 === 0 && i % 8 === 1 ? 'earlierqqsubject' : undefined);
          return subjectEvent(acct.id, n, acct === a && i % 8 === 0);
        });
        await batch(acct.secret, events);
      }
      // Deletes and rewrites before the erasure under test: an earlier erasure of someone else.
      if (round === 12) await erase(aSubjects, [{ kind: 'actor_id', value: 'earlierqqsubject' }]);
    }
  }, 240_000);
  afterAll(() => t?.close());

  it.skipIf(SCALE_OUT || rewrite === 'on')(
    "erases every byte of A's identifiers from the database file and its WAL, and leaves B's identical ones",
    { timeout: 120_000 },
    async () => {
      // Before: every form the scan looks for is in the files, so the scan can fail.
      const before = await storedFiles();
      for (const needle of [ALIAS_A, ...tagged(a.id), ...tagged(b.id), ...SHARED]) expect(occurrences(before, needle), needle).not.toEqual([]);

      const job = await erase(aSubjects, IDENTIFIERS);
      expect(job.counts.events).toBe(24 * 25);

      await expectOnlyBLeft(await storedFiles());
    },
  );

  /** None of A's forms is in the files read after the erasure, while B's identical ones are, and B still reads its events. */
  async function expectOnlyBLeft(after: Parameters<typeof occurrences>[0]): Promise<void> {
    const left: Record<string, string[]> = {};
    for (const needle of [ALIAS_A, ...tagged(a.id)]) {
      const found = occurrences(after, needle);
      if (found.length > 0) left[needle] = found;
    }
    expect(left).toEqual({});
    // B's identical identifiers are still stored, in the same files the scan read.
    for (const needle of [...tagged(b.id), ...SHARED]) expect(occurrences(after, needle), needle).not.toEqual([]);
    expect((await call(b.secret, 'GET', `/v1/events?actor_id=${ACTOR}`)).json().data.length).toBeGreaterThan(0);
  }

  /** PostgreSQL: the partitions of the events table that hold A's subject's events. */
  async function subjectPartitions(): Promise<string[]> {
    const partitions = (
      await sql<{
        relation: string;
      }>`select distinct tableoid::regclass::text as relation from events where account_id = ${a.id} and actor_id in (${ACTOR}, ${ALIAS_A})`.execute(db())
    ).rows.map((r) => r.relation);
    expect(partitions.length).toBeGreaterThan(0);
    return partitions;
  }

  // PostgreSQL's VACUUM removes dead row versions but does not overwrite the space they held (nor
  // a full-text index's keys), so a scan of its files would still find the bytes: what the erasure
  // guarantees there by default is that no row version, live or dead, holds them once it is done.
  it.runIf(SCALE_OUT && rewrite === 'off')('VACUUMs every relation the erasure wrote, and no other', { timeout: 120_000 }, async () => {
    const partitions = await subjectPartitions();
    const before = await vacuumCounts();

    const job = await erase(aSubjects, IDENTIFIERS);
    expect(job.counts.events).toBe(24 * 25);
    expect(job.counts.alerts).toBeGreaterThan(0);

    const after = await vacuumCounts();
    const vacuumed = [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name);
    expect(vacuumed.sort()).toEqual([...partitions, 'alerts', 'subject_jobs'].sort());
    expect((await call(b.secret, 'GET', `/v1/events?actor_id=${ACTOR}`)).json().data.length).toBeGreaterThan(0);
  });

  it.runIf(SCALE_OUT && rewrite === 'on')(
    "rewrites every relation the erasure wrote, and no other, and leaves no byte of A's identifiers in their files while B's identical ones stay",
    { timeout: 180_000 },
    async (ctx) => {
      const partitions = await subjectPartitions();
      const written = [...partitions, 'alerts', 'subject_jobs'];
      const before = await relationFiles(written);
      if (typeof before === 'string') return ctx.skip(before);
      // Before: every form the scan looks for is in these files, so the scan can fail.
      for (const needle of [ALIAS_A, ...tagged(a.id), ...tagged(b.id), ...SHARED]) expect(occurrences(before, needle), needle).not.toEqual([]);
      const filesBefore = await fileNumbers();

      const job = await erase(aSubjects, IDENTIFIERS);
      expect(job.counts.events).toBe(24 * 25);
      expect(job.counts.alerts).toBeGreaterThan(0);

      const filesAfter = await fileNumbers();
      const rewritten = [...filesAfter].filter(([name, file]) => file !== filesBefore.get(name)).map(([name]) => name);
      expect(rewritten.sort()).toEqual(written.sort());

      const after = await relationFiles(written);
      if (typeof after === 'string') return ctx.skip(after);
      await expectOnlyBLeft(after);
    },
  );
});
