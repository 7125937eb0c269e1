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

  it('keys create --scopes --name, set-scopes, rename, revoke: the key does what its scopes allow; one audit entry per change by the cli operator, never the key', async () => {
    const out = await cli('keys', 'create', '--account', accountId, '--scopes', 'read', '--name', 'Reporting job');
    expect(out[0]).toMatch(/^created secret key key_[0-9A-Z]{26} \(scopes read\); it is shown this once:$/);
    const id = /(key_[0-9A-Z]{26})/.exec(out[0] as string)?.[1] as string;
    const reader = out[1] as string;
    expect(await withApp((send) => send(reader))).toBe(403);
    expect(await cli('keys', 'set-scopes', id, '--scopes', 'read,ingest')).toEqual([`key ${id} has the scopes ingest, read`]);
    expect(await cli('keys', 'rename', id, '--name', 'Reports')).toEqual([`key ${id} is named "Reports"`]);
    expect(await withApp((send) => send(reader))).toBe(202);
    const refused = await vigil('keys', 'set-scopes', id, '--scopes', 'read,admin');
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Unknown scope "admin"; the scopes are ingest, read, manage, subjects.') as string,
    });
    await cli('keys', 'revoke', id);
    await cli('keys', 'revoke', id);
    const listed = (await cli('keys', 'list', '--account', accountId)).join('\n').split('\n');
    expect(listed.find((l) => l.startsWith(id))).toMatch(/Reports\s+ingest,read\s+\d{4}-/);

    const t = await testApp({ VIGIL_DATA_DIR: dataDir });
    try {
      const entries = (await t.services.store.audit.list(accountId, { targetId: id }, 50)).items;
      expect(entries.map((e) => e.action).reverse()).toEqual(['key.created', 'key.scopes_changed', 'key.renamed', 'key.revoked']);
      for (const e of entries) expect(e.actor).toEqual({ kind: 'operator', id: 'operator', label: 'cli' });
      expect(entries[3]?.details).toEqual({ prefix: reader.slice(0, 11), kind: 'secret', scopes: ['read'], name: 'Reporting job' });
      expect(entries[2]?.changes).toEqual({ scopes: { before: ['read'], after: ['ingest', 'read'] } });
      expect(JSON.stringify(entries)).not.toContain(reader.slice(11));
      const created = await t.services.store.audit.list(accountId, { action: 'account.' }, 50);
      expect(created.items.map((e) => [e.action, e.details, e.actor.label])).toEqual([['account.created', { name: 'Acme Ltd', plan: 'pro' }, 'cli']]);
    } finally {
      await t.close();
    }
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
    expect(out).toMatch(/^plan\s+rpm\s+eps\s+batch_max\s+monthly_cap\s+overage\s+price_usd_month\s+overage_usd_per_1000\s+threat_models\s+retention_days$/m);
    expect(out).toMatch(/^starter\s+500\s+25\s+50\s+25000\s+bill\s+12\s+0\.4\s+false\s+30$/m);
    expect(out).toMatch(/^pro\s+1000\s+100\s+100\s+100000\s+bill\s+0\s+true\s+90$/m);
    expect(out).toMatch(/^business\s+2000\s+1000\s+100\s+500000/m);
  });

  it('plans show applies VIGIL_PLANS_FILE', async () => {
    const file = join(dataDir, 'plans.json');
    writeFileSync(file, JSON.stringify({ plans: { pro: { rpm: 4321 }, team: { rpm: 10, eps: 1, batch_max: 0, monthly_cap: 100, threat_models: true } } }));
    process.env.VIGIL_PLANS_FILE = file;
    const out = (await cli('plans', 'show')).join('\n');
    expect(out).toMatch(/^pro\s+4321\s/m);
    expect(out).toMatch(/^team\s+10\s+1\s+unavailable\s+100\s+bill\s+0\s+true\s+7$/m);
  });

  it('accounts set-plan changes the plan, and the service applies it', async () => {
    const created = await cli('accounts', 'create', '--plan', 'free', '--name', 'Upgrader');
    const id = /(acc_[0-9A-Z]{26})/.exec(created[0] as string)?.[1] as string;
    const secret = (await cli('keys', 'create', '--account', id, '--kind', 'secret'))[1] as string;
    const batch = async () => {
      const t = await testApp({ VIGIL_DATA_DIR: dataDir });
      try {
        const res = await t.vigil.app.inject({
          method: 'POST',
          url: '/v1/events/batch',
          headers: bearer(secret),
          payload: { events: [{ event: 'auth.login' }] },
        });
        return res.statusCode;
      } finally {
        await t.close();
      }
    };
    expect(await batch()).toBe(403);
    expect(await cli('accounts', 'set-plan', id, '--plan', 'starter')).toEqual([`account ${id} is now on plan starter`]);
    expect((await cli('accounts', 'list')).join('\n')).toMatch(new RegExp(`${id}\\s+Upgrader\\s+starter\\s`));
    expect(await batch()).toBe(202);
    await cli('accounts', 'set-plan', id, '--plan', 'starter');
    const t = await testApp({ VIGIL_DATA_DIR: dataDir });
    try {
      const entries = (await t.services.store.audit.list(id, { action: 'account.plan_changed' }, 50)).items;
      expect(entries.map((e) => [e.actor.label, e.changes])).toEqual([['cli', { plan: { before: 'free', after: 'starter' } }]]);
    } finally {
      await t.close();
    }
  });

  it('keys set-origins: a publishable key made without origins then accepts that browser origin', async () => {
    const out = await cli('keys', 'create', '--account', accountId, '--kind', 'publishable');
    const id = /(key_[0-9A-Z]{26})/.exec(out[0] as string)?.[1] as string;
    const publishable = out[1] as string;
    const fromBrowser = async () => {
      const t = await testApp({ VIGIL_DATA_DIR: dataDir });
      try {
        const headers = { ...bearer(publishable), origin: 'https://app.example.com' };
        return (await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers, payload: { event: 'auth.login' } })).statusCode;
      } finally {
        await t.close();
      }
    };
    expect(await fromBrowser()).toBe(403);
    expect(await cli('keys', 'set-origins', id, '--origins', 'https://app.example.com, https://www.example.com')).toEqual([
      `key ${id} allows https://app.example.com, https://www.example.com`,
    ]);
    expect(await fromBrowser()).toBe(202);
    expect(await cli('keys', 'set-origins', id, '--origins', '')).toEqual([`key ${id} allows no browser origin`]);
    expect(await fromBrowser()).toBe(403);
  });

  it.each([[['--help']], [['-h']], [['help']], [[]]])('%j prints every command on stdout and exits 0', async (...argv) => {
    const result = await vigil(...(argv[0] as string[]));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: vigil <command>/);
    for (const command of ['accounts create', 'accounts set-plan', 'keys set-origins', 'keys revoke', 'plans show', 'feeds update', 'geoip prepare'])
      expect(result.stdout).toContain(`  ${command} `);
  });

  it.each([[['help', 'keys', 'set-origins']], [['keys', 'set-origins', '--help']], [['keys', 'set-origins', 'key_x', '-h']]])(
    "%j prints that command's usage and exits 0",
    async (...argv) => {
      const result = await vigil(...(argv[0] as string[]));
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/^Usage: vigil keys set-origins <key-id> --origins /);
      expect(result.stdout).not.toContain('accounts create');
    },
  );

  it('help for a group lists its commands', async () => {
    const result = await vigil('keys', '--help');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^vigil keys create /),
      'vigil keys list [--account <id>]',
      expect.stringMatching(/^vigil keys set-origins /),
      'vigil keys set-scopes <key-id> --scopes ingest,read,manage',
      'vigil keys rename <key-id> --name <name>',
      'vigil keys revoke <key-id>',
    ]);
  });

  it.each([
    [['accounts'], '"accounts" needs a command: accounts create, accounts list, accounts set-plan'],
    [['frobnicate', 'now'], 'unknown command "frobnicate now"'],
    [['help', 'frobnicate'], 'unknown command "frobnicate"'],
    [['accounts', 'create'], 'accounts create needs --plan'],
    [['keys', 'create', '--kind', 'secret'], 'keys create needs --account'],
    [['keys', 'create', '--account', 'acc_x', '--kind', 'admin'], 'keys create: --kind is secret or publishable'],
    [['keys', 'revoke'], 'keys revoke needs <key-id>'],
    [['keys', 'revoke', 'a', 'b'], 'keys revoke: unexpected argument "b"'],
    [['keys', 'set-origins', 'key_x'], 'keys set-origins needs --origins'],
    [['accounts', 'set-plan', '--plan', 'pro'], 'accounts set-plan needs <account-id>'],
    [['accounts', 'list', '--bogus'], "accounts list: Unknown option '--bogus'"],
  ])('usage error %j: exit 64, one line on stderr', async (argv, says) => {
    const result = await vigil(...argv);
    expect(result).toEqual({ code: 64, stdout: '', stderr: expect.stringContaining(says) as string });
    expect(result.stderr).toMatch(/^vigil: [^\n]+\n$/);
  });

  it.each([
    [['accounts', 'create', '--plan', 'platinum'], 'Unknown plan "platinum"'],
    [['accounts', 'set-plan', 'acc_nope', '--plan', 'pro'], 'No account acc_nope.'],
    [['accounts', 'set-plan', 'acc_nope', '--plan', 'platinum'], 'Unknown plan "platinum"'],
    [['keys', 'create', '--account', 'acc_nope', '--kind', 'secret'], 'No account acc_nope.'],
    [['keys', 'revoke', 'key_nope'], 'No key key_nope.'],
    [['keys', 'set-origins', 'key_nope', '--origins', 'https://a.example'], 'No key key_nope.'],
    [['keys', 'set-origins', 'key_nope', '--origins', 'https://App.example/'], 'Did you mean "https://app.example"?'],
    [['keys', 'set-origins', 'key_nope', '--origins', 'app.example'], '"app.example" is not an origin'],
  ])('refused %j: exit 1, the reason in one line on stderr', async (argv, says) => {
    const result = await vigil(...argv);
    expect(result).toEqual({ code: 1, stdout: '', stderr: expect.stringContaining(says) as string });
    expect(result.stderr).toMatch(/^vigil: [^\n]+\n$/);
  });

  it('set-origins refuses a secret key', async () => {
    const id = /(key_[0-9A-Z]{26})/.exec((await cli('keys', 'create', '--account', accountId, '--kind', 'secret'))[0] as string)?.[1] as string;
    const result = await vigil('keys', 'set-origins', id, '--origins', 'https://a.example');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('publishable keys only');
  });

  it('a configuration error: exit 78 naming the variable', async () => {
    process.env.VIGIL_PLANS_FILE = join(dataDir, 'missing.json');
    const result = await vigil('plans', 'show');
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/^vigil: configuration error: VIGIL_PLANS_FILE /);
  });

  it('an unreachable database: exit 69 and one line', async () => {
    process.env.VIGIL_DATABASE_URL = 'postgres://vigil@127.0.0.1:1/vigil';
    try {
      const result = await vigil('accounts', 'list');
      expect(result.code).toBe(69);
      expect(result.stderr).toMatch(/^vigil: the database cannot be reached: [^\n]+\n$/);
    } finally {
      delete process.env.VIGIL_DATABASE_URL;
    }
  });

  it('nothing was created by the failed commands', async () => {
    expect((await cli('accounts', 'list')).join('\n').split('\n')).toHaveLength(4);
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

describe('vigil feeds update with the default manifest', () => {
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
  });

  it('the data directory gets feeds.json naming the Tor exit list, FireHOL level 1 and Spamhaus DROP; update fills them and scoring uses them', async () => {
    const { createServer } = await import('node:http');
    const { readFileSync } = await import('node:fs');
    const fixtures = new URL('../fixtures/feeds/', import.meta.url).pathname;
    // Each list in its publisher's format, served under the path of its public URL.
    const lists: Record<string, string> = {
      '/torbulkexitlist': readFileSync(join(fixtures, 'tor-exit-nodes.txt'), 'utf8'),
      '/files/firehol_level1.netset': readFileSync(join(fixtures, 'firehol_level1.netset'), 'utf8'),
      '/drop/drop.txt': '; Spamhaus DROP List 2026/11/26\n; Expires: Thu, 26 Nov 2026 14:00:00 GMT\n1.10.16.0/20 ; SBL256894\n',
    };
    const server = createServer((req, res) => {
      const body = lists[req.url ?? ''];
      res.statusCode = body === undefined ? 404 : 200;
      res.end(body ?? 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const local = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    for (const k of Object.keys(process.env)) if (k.startsWith('VIGIL_')) delete process.env[k];
    const data = mkdtempSync(join(tmpdir(), 'vigil-default-feeds-'));
    process.env.VIGIL_DATA_DIR = data;
    const manifestFile = join(data, 'feeds', 'feeds.json');
    const out: string[] = [];
    try {
      // A first run writes the default manifest; with the public hosts pointed at the local server it downloads all three.
      const { defaultManifest } = await import('../../src/enrichment/feeds/defaults.js');
      const manifest = JSON.parse(defaultManifest()) as { feeds: { file: string; kind: string; url: string }[] };
      expect(manifest.feeds.map((f) => [f.kind, new URL(f.url).host])).toEqual([
        ['tor', 'check.torproject.org'],
        ['blocklist', 'iplists.firehol.org'],
        ['blocklist', 'www.spamhaus.org'],
      ]);
      const started = await testApp({ VIGIL_DATA_DIR: data });
      await started.close();
      expect(readFileSync(manifestFile, 'utf8')).toBe(defaultManifest());
      for (const f of manifest.feeds) f.url = local + new URL(f.url).pathname;
      writeFileSync(manifestFile, JSON.stringify(manifest));
      expect(await runCli(['feeds', 'update'], (line) => out.push(line))).toBe(0);
    } finally {
      server.close();
    }
    expect(out.at(-1)).toBe('3 updated, 0 failed (old file kept), 0 without a URL');
    const t = await testApp({ VIGIL_DATA_DIR: data });
    try {
      const { secret } = await t.account('pro');
      const score = async (ip: string) => {
        const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(secret), payload: { event: 'custom.page.view', ip } });
        return (res.json() as { risk: { breakdown: { source: string }[] } }).risk.breakdown.map((l) => l.source);
      };
      expect(await score('185.220.101.2')).toContain('threat_intel.tor_exit');
      expect(await score('1.10.16.5')).toContain('threat_intel.blocklist');
      expect(await score('203.0.113.9')).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it("an operator's feeds.json in the data directory is never replaced", async () => {
    for (const k of Object.keys(process.env)) if (k.startsWith('VIGIL_')) delete process.env[k];
    const data = mkdtempSync(join(tmpdir(), 'vigil-default-feeds-'));
    process.env.VIGIL_DATA_DIR = data;
    // This one lists no URL, so nothing is downloaded.
    const { mkdirSync, readFileSync } = await import('node:fs');
    mkdirSync(join(data, 'feeds'));
    writeFileSync(join(data, 'feeds', 'feeds.json'), '{"feeds": [{"file": "tor-exit-nodes.txt", "kind": "tor"}]}');
    const out: string[] = [];
    expect(await runCli(['feeds', 'update'], (line) => out.push(line))).toBe(0);
    expect(out.at(-1)).toBe('0 updated, 0 failed (old file kept), 1 without a URL');
    expect(readFileSync(join(data, 'feeds', 'feeds.json'), 'utf8')).toContain('"kind": "tor"}');
  });
});
