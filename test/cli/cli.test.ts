import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliMain, runCli } from '../../src/cli/main.js';
import { bearer, testApp } from '../helpers/app.js';

const dataDir = mkdtempSync(join(tmpdir(), 'vigil-cli-'));
const saved = { ...process.env };

async function cli(...argv: string[]): Promise<string[]> {
  const out: string[] = [];
  expect(await runCli(argv, (line) => out.push(line))).toBe(0);
  return out;
}

/** Runs the command as `vigil` does; returns the exit code, stdout and stderr. */
async function vigil(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await cliMain(argv);
    return { code, stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** The app on the CLI's data directory, to check that what the CLI did works over HTTP. */
async function withApp<T>(fn: (inject: (key: string) => Promise<number>) => Promise<T>): Promise<T> {
  const t = await testApp({ VIGIL_DATA_DIR: dataDir });
  try {
    return await fn(
      async (key) => (await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: { event: 'auth.login' } })).statusCode,
    );
  } finally {
    await t.close();
  }
}

describe('vigil CLI', () => {
  beforeAll(() => {
    for (const k of Object.keys(process.env)) if (k.startsWith('VIGIL_')) delete process.env[k];
    process.env.VIGIL_DATA_DIR = dataDir;
  });
  afterAll(() => {
    process.env = saved;
  });
  afterEach(() => {
    delete process.env.VIGIL_PLANS_FILE;
  });

  let accountId = '';
  let keyId = '';
  let key = '';

  it('accounts create', async () => {
    const out = await cli('accounts', 'create', '--plan', 'pro', '--name', 'Acme Ltd');
    expect(out).toHaveLength(1);
    const m = /^created account (acc_[0-9A-Z]{26}) \(plan pro\)$/.exec(out[0] as string);
    expect(m).not.toBeNull();
    accountId = m?.[1] as string;
  });

  it('accounts list', async () => {
    await cli('accounts', 'create', '--plan', 'free');
    const out = (await cli('accounts', 'list')).join('\n');
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+plan\s+created$/);
    expect(lines).toHaveLength(3);
    expect(out).toMatch(new RegExp(`${accountId}\\s+Acme Ltd\\s+pro\\s+\\d{4}-`));
  });

  it('keys create shows the key once, and it works', async () => {
    const out = await cli('keys', 'create', '--account', accountId, '--kind', 'secret');
    expect(out).toHaveLength(2);
    keyId = /created secret key (key_[0-9A-Z]{26})/.exec(out[0] as string)?.[1] as string;
    key = out[1] as string;
    expect(keyId).toBeTruthy();
    expect(key).toMatch(/^vgl_sk_[0-9A-Za-z]{32}$/);
    expect(await withApp((send) => send(key))).toBe(202);
  });

  it('keys create --kind publishable --origins', async () => {
    const out = await cli('keys', 'create', '--account', accountId, '--kind', 'publishable', '--origins', 'https://a.example, https://b.example');
    expect(out[1]).toMatch(/^vgl_pk_/);
    const list = (await cli('keys', 'list', '--account', accountId)).join('\n');
    expect(list).toContain('https://a.example,https://b.example');
  });

  it('keys list never shows a key, only its prefix', async () => {
    const out = (await cli('keys', 'list')).join('\n');
    expect(out).toContain(keyId);
    expect(out).toContain(key.slice(0, 11));
    expect(out).not.toContain(key);
    expect(out).not.toContain(key.slice(11));
  });

  it('keys revoke: the key answers 401 from then on', async () => {
    expect(await cli('keys', 'revoke', keyId)).toEqual([`revoked ${keyId}`]);
    const line = (await cli('keys', 'list', '--account', accountId))
      .join('\n')
      .split('\n')
      .find((l) => l.startsWith(keyId));
    expect(line).toMatch(/\d{4}-\d{2}-\d{2}T/);
    expect(await withApp((send) => send(key))).toBe(401);
  });

  it('plans show: the plan table in force', async () => {
    const out = (await cli('plans', 'show')).join('\n');
    expect(out).toMatch(/^free\s+30\s+5\s+unavailable\s+2500\s+drop/m);
    expect(out).toMatch(/^starter\s+500\s+25\s+50\s+25000\s+bill\s+0\.4$/m);
    expect(out).toMatch(/^pro\s+1000\s+100\s+100\s+100000/m);
    expect(out).toMatch(/^business\s+2000\s+1000\s+100\s+500000/m);
  });

  it('plans show applies VIGIL_PLANS_FILE', async () => {
    const file = join(dataDir, 'plans.json');
    writeFileSync(file, JSON.stringify({ plans: { pro: { rpm: 4321 } } }));
    process.env.VIGIL_PLANS_FILE = file;
    expect((await cli('plans', 'show')).join('\n')).toMatch(/^pro\s+4321\s/m);
  });

  it.each([
    [[], 'no command'],
    [['accounts'], 'unknown command'],
    [['frobnicate', 'now'], 'unknown command "frobnicate now"'],
    [['accounts', 'create'], '--plan'],
    [['accounts', 'create', '--plan', 'platinum'], 'platinum'],
    [['keys', 'create', '--kind', 'secret'], '--account'],
    [['keys', 'create', '--account', 'acc_x', '--kind', 'admin'], '--kind secret'],
    [['keys', 'create', '--account', 'acc_nope', '--kind', 'secret'], 'acc_nope'],
    [['keys', 'revoke'], 'key id'],
    [['keys', 'revoke', 'key_nope'], 'key_nope'],
    [['accounts', 'list', '--bogus'], 'bogus'],
  ])('usage error %j: exit 64 with the reason and the usage text', async (argv, says) => {
    const result = await vigil(...argv);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(says);
    expect(result.stderr).toContain('Usage: vigil');
  });

  it('a configuration error: exit 78 naming the variable', async () => {
    process.env.VIGIL_PLANS_FILE = join(dataDir, 'missing.json');
    const result = await vigil('plans', 'show');
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/^vigil: configuration error: VIGIL_PLANS_FILE /);
  });

  it('nothing was created by the failed commands', async () => {
    expect((await cli('accounts', 'list')).join('\n').split('\n')).toHaveLength(3);
  });
});

describe('vigil feeds update', () => {
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
  });

  it('downloads each feed with a URL, keeps the old file when a download fails, and says so', async () => {
    const { createServer } = await import('node:http');
    const { readFileSync } = await import('node:fs');
    const server = createServer((_req, res) => res.end('185.220.101.1\n185.220.101.2\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const feeds = mkdtempSync(join(tmpdir(), 'vigil-feeds-'));
    writeFileSync(join(feeds, 'blocklist-old.txt'), '203.0.113.0/24\n');
    writeFileSync(
      join(feeds, 'feeds.json'),
      JSON.stringify({
        feeds: [
          { file: 'tor-exit-nodes.txt', kind: 'tor', url: `http://127.0.0.1:${port}/tor` },
          { file: 'blocklist-old.txt', kind: 'blocklist', url: 'http://127.0.0.1:1/unreachable' },
        ],
      }),
    );
    for (const k of Object.keys(process.env)) if (k.startsWith('VIGIL_')) delete process.env[k];
    process.env.VIGIL_FEEDS_DIR = feeds;
    const out: string[] = [];
    try {
      expect(await runCli(['feeds', 'update'], (line) => out.push(line))).toBe(1);
    } finally {
      server.close();
    }
    expect(out.join('\n')).toMatch(/1 updated, 1 failed/);
    expect(readFileSync(join(feeds, 'tor-exit-nodes.txt'), 'utf8')).toContain('185.220.101.2');
    expect(readFileSync(join(feeds, 'blocklist-old.txt'), 'utf8')).toBe('203.0.113.0/24\n');
  });
});
