/**
 * What overwriting freed bytes costs SQLite, and which full-text setting leaves no trace of an
 * erased term: a contentless FTS5 table as the service's (`contentless_delete=1`) filled with
 * ROWS texts in transactions of 100 (so automerge runs), then an erasure of one row in 333 (one
 * term, `zqsubjectqz`, only those rows hold), then a retention delete of the oldest fifth in
 * transactions of 2,000. Variants: `PRAGMA secure_delete` OFF or ON, and FTS5's own
 * `secure-delete` option (deletes edit the segments in place instead of adding tombstones, so
 * the erasure runs no `optimize`). CPU (user + system of this single-threaded process) per
 * inserted and per retention-deleted row, the erasure's CPU, and whether the term's bytes are
 * still in the database file after a TRUNCATE checkpoint. Alternating rounds; every round prints.
 *   npx tsx bench/secure-delete.ts
 *   ROWS=100000 ROUNDS=3
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

const ROWS = Number(process.env.ROWS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TERM = 'zqsubjectqz';

const cpuMs = (fn: () => void): number => {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

interface Variant {
  readonly pragma: 'OFF' | 'ON';
  readonly ftsSecureDelete: boolean;
}

function run(dir: string, variant: Variant): Record<string, string | boolean> {
  const file = join(dir, 'fts.db');
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`secure_delete = ${variant.pragma}`);
  db.exec("create virtual table f using fts5(text, content = '', contentless_delete = 1)");
  if (variant.ftsSecureDelete) db.exec("insert into f (f, rank) values ('secure-delete', 1)");
  const insert = db.prepare('insert into f (rowid, text) values (?, ?)');
  const remove = db.prepare('delete from f where rowid = ?');
  let id = 0;
  const insertMs = cpuMs(() => {
    for (let group = 0; group < ROWS / 100; group++)
      db.transaction(() => {
        for (let i = 0; i < 100; i++) {
          id++;
          insert.run(id, `user${id % 5000} login from 203.0.113.${id % 250} ${id % 333 === 0 ? TERM : `other${id % 7000}`} agent mozilla chrome`);
        }
      })();
  });
  const erased: number[] = [];
  for (let i = 333; i <= ROWS; i += 333) erased.push(i);
  const eraseMs = cpuMs(() => {
    db.transaction(() => {
      for (const rowid of erased) remove.run(rowid);
    })();
    if (!variant.ftsSecureDelete) db.exec("insert into f (f) values ('optimize')");
  });
  db.pragma('wal_checkpoint(TRUNCATE)');
  const termLeft = readFileSync(file).includes(Buffer.from(TERM));
  const oldest = ROWS / 5;
  const retentionMs = cpuMs(() => {
    for (let start = 1; start <= oldest; start += 2000)
      db.transaction(() => {
        for (let rowid = start; rowid < start + 2000 && rowid <= oldest; rowid++) if (rowid % 333 !== 0) remove.run(rowid);
      })();
  });
  db.close();
  return {
    variant: `secure_delete=${variant.pragma}${variant.ftsSecureDelete ? ', FTS5 secure-delete' : ', optimize'}`,
    'insert µs/row': ((insertMs * 1000) / ROWS).toFixed(1),
    'erasure ms': eraseMs.toFixed(0),
    'retention µs/row': ((retentionMs * 1000) / oldest).toFixed(1),
    'term left in file': termLeft,
  };
}

const VARIANTS: readonly Variant[] = [
  { pragma: 'OFF', ftsSecureDelete: false },
  { pragma: 'ON', ftsSecureDelete: false },
  { pragma: 'ON', ftsSecureDelete: true },
];
const dir = mkdtempSync(join(tmpdir(), 'vigil-secure-delete-'));
try {
  const rows: Record<string, string | boolean>[] = [];
  for (let round = 0; round < ROUNDS; round++) for (const variant of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) rows.push(run(dir, variant));
  console.log(`${ROWS} rows, ${ROUNDS} alternating rounds`);
  console.table(rows);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
