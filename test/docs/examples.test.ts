/**
 * The examples of the README and of every page under docs/ (guides, reference, internals) run as written: every shell block after an
 * `<!-- example: status N -->` marker is run with sh and curl against the real service on a port,
 * and its answer must have the status of the marker and, when a JSON block follows, that block's
 * shape and values (ids and timestamps by format only, since they differ on every run).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, testApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/util/clock.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

export interface Example {
  readonly file: string;
  readonly line: number;
  readonly status: number;
  readonly command: string;
  /** The JSON block shown as the answer, when there is one. */
  readonly answer?: string;
}

const MARKER = /^<!-- example: status (\d{3}) -->$/;
const FENCE = /^```(\w*)\s*$/;

/** The marked examples of one Markdown file, in order. */
export function examplesIn(file: string, text: string): Example[] {
  const lines = text.split('\n');
  const examples: Example[] = [];
  /** The fenced block starting at or after `from` (blank lines skipped), or undefined. */
  const blockAt = (from: number): { lang: string; body: string; end: number } | undefined => {
    let i = from;
    while (i < lines.length && (lines[i] as string).trim() === '') i++;
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) return undefined;
    const close = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (close < 0) throw new Error(`${file}:${i + 1}: unclosed code block`);
    return { lang: open[1] ?? '', body: lines.slice(i + 1, close).join('\n'), end: close + 1 };
  };
  lines.forEach((line, i) => {
    const marker = MARKER.exec(line.trim());
    if (!marker) return;
    const command = blockAt(i + 1);
    if (!command || command.lang !== 'sh') throw new Error(`${file}:${i + 1}: an example marker must be followed by a sh block`);
    const answer = blockAt(command.end);
    examples.push({
      file,
      line: i + 1,
      status: Number(marker[1]),
      command: command.body,
      ...(answer?.lang === 'json' ? { answer: answer.body } : {}),
    });
  });
  return examples;
}

const ID = /^([a-z]+)_[0-9A-Z]{26}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Differences between an answer and the documented one: every documented key is present and no
 * other, arrays have the documented length, values are equal, except ids (same prefix),
 * timestamps (same format) and strings shown ending in `…` (the answer starts with the rest).
 */
export function differences(actual: unknown, shown: unknown, path = '$'): string[] {
  if (typeof shown === 'string' && typeof actual === 'string') {
    const id = ID.exec(shown);
    if (id) return ID.exec(actual)?.[1] === id[1] ? [] : [`${path}: ${JSON.stringify(actual)} is not a ${id[1]}_ id`];
    if (TIMESTAMP.test(shown)) return TIMESTAMP.test(actual) ? [] : [`${path}: ${JSON.stringify(actual)} is not a timestamp`];
    if (shown.endsWith('…'))
      return actual.startsWith(shown.slice(0, -1)) ? [] : [`${path}: ${JSON.stringify(actual)} does not start like ${JSON.stringify(shown)}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== shown.length) return [`${path}: ${actual.length} items, the example shows ${shown.length}: ${JSON.stringify(actual)}`];
    return shown.flatMap((s: unknown, i) => differences(actual[i], s, `${path}[${i}]`));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const a = actual as Record<string, unknown>;
    const s = shown as Record<string, unknown>;
    const missing = Object.keys(s).filter((k) => !(k in a));
    const extra = Object.keys(a).filter((k) => !(k in s));
    return [
      ...missing.map((k) => `${path}.${k}: shown, not answered`),
      ...extra.map((k) => `${path}.${k}: answered (${JSON.stringify(a[k])}), not shown`),
      ...Object.keys(s)
        .filter((k) => k in a)
        .flatMap((k) => differences(a[k], s[k], `${path}.${k}`)),
    ];
  }
  return Object.is(actual, shown) ? [] : [`${path}: answered ${JSON.stringify(actual)}, the example shows ${JSON.stringify(shown)}`];
}

const DOCS = [
  'README.md',
  ...readdirSync(`${ROOT}docs`, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const byFile = DOCS.map((file) => ({ file, examples: examplesIn(file, readFileSync(ROOT + file, 'utf8')) })).filter((f) => f.examples.length > 0);

it('the README and the quick-start have examples that run', () => {
  expect(byFile.map((f) => f.file)).toEqual(expect.arrayContaining(['README.md', 'docs/guides/quick-start.md']));
});

it('the comparison reports what differs', () => {
  const shown = { id: 'evt_01M8ABX65647HGVZ7Q0YSJ2213', at: '2026-11-25T22:06:04.966Z', prefix: 'vgl_pk_…', risk: { score: 10 }, tags: [] };
  const same = { id: 'evt_01M8ABX65647HGVZ7Q0YSJ22XX', at: '2027-01-01T00:00:00.000Z', prefix: 'vgl_pk_x1Y2', risk: { score: 10 }, tags: [] };
  expect(differences(same, shown)).toEqual([]);
  expect(differences({ id: 'alr_01M8ABX65647HGVZ7Q0YSJ2213', at: 'now', prefix: 'vgl_sk_x1Y2', risk: { score: 15, extra: 1 }, tags: ['x'] }, shown)).toEqual([
    '$.id: "alr_01M8ABX65647HGVZ7Q0YSJ2213" is not a evt_ id',
    '$.at: "now" is not a timestamp',
    '$.prefix: "vgl_sk_x1Y2" does not start like "vgl_pk_…"',
    '$.risk.extra: answered (1), not shown',
    '$.risk.score: answered 15, the example shows 10',
    '$.tags: 1 items, the example shows 0: ["x"]',
  ]);
  expect(differences({ a: 1 }, { b: 1 })).toEqual(['$.b: shown, not answered', '$.a: answered (1), not shown']);
});

for (const { file, examples } of byFile) {
  describe(`examples of ${file}, run against the service as a first start leaves it`, () => {
    let t: TestApp;
    let base = '';
    const env: Record<string, string> = { VIGIL_ADMIN_TOKEN: ADMIN_TOKEN };
    /** The last id of each kind an answer gave, for the examples that name one (`evt_…`). */
    const lastId = new Map<string, string>();
    beforeAll(async () => {
      t = await testApp({}, { clock: new ManualClock(Date.now()) });
      const first = await t.vigil.accounts.bootstrap('free');
      if (!first) throw new Error('the store was not empty');
      env.VIGIL_API_KEY = first.secret;
      env.VIGIL_PUBLISHABLE_KEY = first.publishable;
      lastId.set('key', first.publishableId);
      lastId.set('acc', first.account.id);
      await t.vigil.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.vigil.app.server.address() as AddressInfo).port}`;
    });
    afterAll(() => t?.close());

    for (const example of examples) {
      it(`${file}:${example.line} answers ${example.status}${example.answer ? ' as shown' : ''}`, async () => {
        // A reader runs them seconds apart: the per-second window of the Free plan does not join them.
        t.clock.advance(1_000);
        const command = example.command
          .replaceAll('http://localhost:8080', base)
          .replaceAll('vgl_sk_…', env.VIGIL_API_KEY as string)
          .replaceAll('vgl_pk_…', env.VIGIL_PUBLISHABLE_KEY as string)
          .replace(/\b([a-z]+)_…/g, (whole, prefix: string) => lastId.get(prefix) ?? whole);
        const { stdout } = await run('sh', ['-c', `${command} -w '\\n%{http_code}'`], { env: { PATH: process.env.PATH ?? '', ...env } });
        const cut = stdout.lastIndexOf('\n');
        const body = stdout.slice(0, cut);
        expect(Number(stdout.slice(cut + 1)), body).toBe(example.status);
        const answer: unknown = body.trim() === '' ? undefined : JSON.parse(body);
        for (const match of body.matchAll(/"([a-z]+_[0-9A-Z]{26})"/g)) lastId.set((match[1] as string).split('_')[0] as string, match[1] as string);
        if (example.answer !== undefined) expect(differences(answer, JSON.parse(example.answer))).toEqual([]);
      });
    }
  });
}
