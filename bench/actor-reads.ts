/**
 * The cost of the read API's actor and address filters on a filled database: a copy of a
 * benchmark data directory (`BENCH_DATA`, default the newest 1,000,000-event template in
 * $TMPDIR/vigil-bench-prefill/), opened and migrated by the store of a checkout (`BENCH_CHECKOUT`,
 * default this one, so a baseline checkout reads the same data through its own schema). For
 * `BENCH_VALUES` (20) actors and as many addresses seen in the newest events: the median and
 * the largest wall time of a first page of 50 and of walking 5 pages.
 *   npx tsx bench/actor-reads.ts
 *   BENCH_CHECKOUT=/path/to/baseline BENCH_DATA=$TMPDIR/vigil-bench-prefill/<tag>-1000000 npx tsx bench/actor-reads.ts
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { openSqliteStore as OpenSqliteStore } from '../src/storage/sqlite.js';
import type { EventFilter } from '../src/storage/types.js';

const VALUES = Number(process.env.BENCH_VALUES ?? 20);
const PAGE = 50;
const PAGES = 5;

function newestTemplate(): string {
  const templates = join(tmpdir(), 'vigil-bench-prefill');
  const names = readdirSync(templates).filter((name) => name.endsWith('-1000000'));
  const newest = names.sort((a, b) => statSync(join(templates, b)).mtimeMs - statSync(join(templates, a)).mtimeMs)[0];
  if (newest === undefined) throw new Error(`no 1000000-event template in ${templates}: run npm run bench first`);
  return join(templates, newest);
}

const checkout = resolve(process.env.BENCH_CHECKOUT ?? '.');
const source = process.env.BENCH_DATA ?? newestTemplate();
const dataDir = mkdtempSync(join(tmpdir(), 'vigil-actor-reads-'));
cpSync(source, dataDir, { recursive: true });
const { openSqliteStore } = (await import(pathToFileURL(join(checkout, 'src/storage/sqlite.ts')).href)) as { openSqliteStore: typeof OpenSqliteStore };
const store = openSqliteStore({ dataDir, synchronous: 'full' });
try {
  const started = Date.now();
  await store.migrate();
  console.log(`${checkout} on a copy of ${source} (migrated in ${Date.now() - started} ms)`);
  const accounts = await store.accounts.listAccounts();
  let account = accounts[0]?.id ?? '';
  for (const a of accounts) if ((await store.events.countEvents(a.id)) > (await store.events.countEvents(account))) account = a.id;
  const recent = (await store.events.listEvents(account, {}, 2000)).items;
  const distinct = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))].slice(0, VALUES);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const time = async (filter: EventFilter, pages: number): Promise<number> => {
    const t0 = process.hrtime.bigint();
    let cursor: string | undefined;
    for (let p = 0; p < pages; p++) {
      const page = await store.events.listEvents(account, filter, PAGE, cursor);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const rows = [];
  for (const [name, values, filterOf] of [
    ['actor_id', distinct(recent.map((e) => e.actorId)), (v: string): EventFilter => ({ actorId: v })],
    ['ip', distinct(recent.map((e) => e.ip)), (v: string): EventFilter => ({ ip: v })],
  ] as const) {
    const first: number[] = [];
    const walk: number[] = [];
    for (const v of values) {
      first.push(await time(filterOf(v), 1));
      walk.push(await time(filterOf(v), PAGES));
    }
    rows.push({
      filter: name,
      values: values.length,
      'first page ms (median)': Math.round(median(first) * 10) / 10,
      'first page ms (max)': Math.round(Math.max(...first) * 10) / 10,
      [`${PAGES} pages ms (median)`]: Math.round(median(walk) * 10) / 10,
    });
  }
  console.table(rows);
} finally {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
