/** The reference tables of docs/ are complete: every error code and every configuration variable. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/event/rejection.js';
import { ERROR_STATUS } from '../../src/http/errors.js';
import { loadConfig } from '../../src/config/config.js';
import type { Plan } from '../../src/event/account.js';
import { DEFAULT_PLANS, parsePlans, planFileEntry } from '../../src/limits/plans.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(ROOT + file, 'utf8');

/** The rows of the first Markdown table whose header starts with `firstHeader`, as cells. */
function tableRows(text: string, firstHeader: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^\\|\\s*${firstHeader}\\s*\\|`).test(l));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

describe('docs/reference/api.md error table', () => {
  const rows = tableRows(read('docs/reference/api.md'), 'Status');

  it('lists every error code the API answers with, once, with its status', () => {
    const documented = rows.map(([status, code]) => [unquote(code ?? ''), Number(status)]);
    expect(documented.map(([code]) => code).sort()).toEqual([...ERROR_CODES].sort());
    for (const [code, status] of documented) expect(status, String(code)).toBe(ERROR_STATUS[code as keyof typeof ERROR_STATUS]);
  });

  it('says when each is answered', () => {
    for (const row of rows) expect((row[2] ?? '').length, row[1]).toBeGreaterThan(10);
  });
});

/** Every VIGIL_… name the service's sources mention (configuration is read in one place, but a name anywhere counts). */
function variablesInSources(): string[] {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.ts'));
  const names = new Set<string>();
  for (const file of files) {
    let text: string;
    try {
      text = read(file);
    } catch {
      continue; // deleted in the work tree
    }
    for (const m of text.matchAll(/\bVIGIL_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(m[0]);
  }
  return [...names].sort();
}

describe('docs/reference/configuration.md', () => {
  const rows = tableRows(read('docs/reference/configuration.md'), 'Variable');
  const documented = rows.map((r) => unquote(r[0] ?? ''));

  it('documents every variable the service reads, and no other', () => {
    const read = variablesInSources();
    expect(read.length).toBeGreaterThan(30);
    expect(documented.slice().sort()).toEqual(read);
  });

  it('each row has a default and a meaning', () => {
    for (const row of rows) {
      expect(row[1], row[0]).toBeTruthy();
      expect((row[2] ?? '').length, row[0]).toBeGreaterThan(5);
    }
  });

  it('a documented default that is a plain value is the default in force', () => {
    const defaults = loadConfig({});
    const shown = Object.fromEntries(rows.map((r) => [unquote(r[0] ?? ''), unquote(r[1] ?? '')]));
    expect(String(defaults.port)).toBe(shown.VIGIL_PORT);
    expect(defaults.host).toBe(shown.VIGIL_HOST);
    expect(String(defaults.ipLimitPerMinute)).toBe(shown.VIGIL_IP_LIMIT);
    expect(String(defaults.maxConnectionsPerIp)).toBe(shown.VIGIL_MAX_CONNECTIONS_PER_IP);
    expect(String(defaults.maxRequestsPerSocket)).toBe(shown.VIGIL_MAX_REQUESTS_PER_SOCKET);
    expect(String(defaults.maxEventBytes)).toBe(shown.VIGIL_MAX_EVENT_BYTES);
    expect(String(defaults.maxBatchBytes)).toBe(shown.VIGIL_MAX_BATCH_BYTES);
    expect(String(defaults.commitWindowMs)).toBe(shown.VIGIL_COMMIT_WINDOW_MS);
    expect(String(defaults.commitMaxEvents)).toBe(shown.VIGIL_COMMIT_MAX_EVENTS);
    expect(defaults.sqliteSynchronous).toBe(shown.VIGIL_SQLITE_SYNCHRONOUS);
    expect(defaults.logLevel).toBe(shown.VIGIL_LOG_LEVEL);
    expect(defaults.initialPlan).toBe(shown.VIGIL_INITIAL_PLAN);
    expect(defaults.metricsHost).toBe(shown.VIGIL_METRICS_HOST);
    expect(defaults.redisPrefix).toBe(shown.VIGIL_REDIS_PREFIX);
    expect(String(defaults.webhooks.timeoutMs)).toBe(shown.VIGIL_WEBHOOK_TIMEOUT_MS);
    expect(String(defaults.webhooks.pollMs)).toBe(shown.VIGIL_WEBHOOK_POLL_MS);
    expect(String(defaults.webhooks.maxEndpointsPerAccount)).toBe(shown.VIGIL_WEBHOOK_MAX_ENDPOINTS);
  });
});

describe('docs/reference/configuration.md plans-file table', () => {
  const rows = tableRows(read('docs/reference/configuration.md'), 'Field');
  const BUILT_IN = Object.values(DEFAULT_PLANS);
  const cell = (value: unknown) => (value === null ? 'null' : String(value));
  const shown = (text: string | undefined) => unquote(text ?? '').replace(/^"|"$/g, '');
  const REQUIRED = { rpm: 1, eps: 1, batch_max: 0, monthly_cap: 0 };

  it('lists every field of a plan with each built-in plan’s value', () => {
    expect(rows.map((r) => shown(r[0]))).toEqual(Object.keys(planFileEntry(DEFAULT_PLANS.free)));
    for (const row of rows) {
      const field = shown(row[0]);
      expect(row.slice(3, 3 + BUILT_IN.length).map(shown), field).toEqual(BUILT_IN.map((plan) => cell(planFileEntry(plan)[field])));
    }
  });

  it('gives what a new plan without the field gets, or says the field is required', () => {
    for (const row of rows) {
      const field = shown(row[0]);
      const spec: Record<string, unknown> = Object.assign({}, REQUIRED);
      delete spec[field];
      const made = () => planFileEntry(parsePlans(JSON.stringify({ plans: { fresh: spec } })).fresh as Plan)[field];
      if (shown(row[row.length - 1]) === 'required') expect(made, field).toThrow(`new plan "fresh" needs ${field}`);
      else expect(cell(made()), field).toBe(shown(row[row.length - 1]));
    }
  });
});
