import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../process/service.js';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createServices } from '../../src/services.js';
import { ManualClock } from '../../src/util/clock.js';
import { faultyStore } from '../http/support.js';

// A child process start-up on a loaded machine: time is not what these tests measure.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const ADMIN = 'secrets-test-admin-token-5f1c2e';
const PASSWORD_SHA1 = '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8'; // sha1("password")
const NOT_A_KEY = 'vgl_sk_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ';

/** Every form a secret could leak in: as given, lower case (hashes), and its key body without the prefix. */
function needles(secrets: string[]): string[] {
  return secrets.flatMap((s) => [s, s.toLowerCase(), s.replace(/^vgl_(sk|pk)_/, '')]).filter((s) => s.length >= 16);
}

function expectNoSecret(where: string, text: string, secrets: string[]): void {
  for (const needle of needles(secrets)) expect(text.includes(needle), `${where} contains ${needle.slice(0, 10)}…`).toBe(false);
}

/** The requests that carry secrets, and some that fail with them. */
async function exercise(base: string, secret: string, publishable: string): Promise<{ bodies: string[]; eventIds: string[] }> {
  const bodies: string[] = [];
  const eventIds: string[] = [];
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, text };
  };
  const ev = { event: 'auth.login.failure', actor_id: 'alice', ip: '203.0.113.7', password_sha1: PASSWORD_SHA1 };
  for (const headers of [{ authorization: `Bearer ${secret}` }, { 'x-api-key': secret }, { authorization: `Bearer ${publishable}` }] as Record<
    string,
    string
  >[]) {
    const ok = await call('POST', '/v1/events', headers, ev);
    expect(ok.status).toBe(202);
    eventIds.push(JSON.parse(ok.text).id);
  }
  expect((await call('POST', '/v1/events', { authorization: `Bearer ${NOT_A_KEY}` }, ev)).status).toBe(401);
  expect((await call('POST', '/v1/events', { authorization: `Bearer ${secret}x` }, ev)).status).toBe(401);
  expect((await call('POST', '/v1/events', { authorization: `Bearer ${secret}` }, { ...ev, event: 'not a type' })).status).toBe(400);
  expect((await call('POST', '/v1/events', { authorization: `Bearer ${secret}` }, { ...ev, password_sha1: `${PASSWORD_SHA1}00` })).status).toBe(400);
  expect((await call('POST', '/v1/events', { authorization: `Bearer ${secret}` }, `{"password_sha1":"${PASSWORD_SHA1}",`)).status).toBe(400);
  expect((await call('GET', '/v1/events', { authorization: `Bearer ${publishable}` })).status).toBe(403);
  expect((await call('POST', '/admin/accounts', { authorization: `Bearer ${ADMIN}x` }, { name: 'x', plan: 'pro' })).status).toBe(401);
  expect((await call('POST', '/admin/accounts', { authorization: `Bearer ${ADMIN}` }, { name: ADMIN, plan: 'nope' })).status).toBe(400);
  for (const id of eventIds) {
    const got = await call('GET', `/v1/events/${id}`, { authorization: `Bearer ${secret}` });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text).password_sha1).toBeUndefined();
  }
  bodies.push((await call('GET', '/metrics', {})).text);
  return { bodies, eventIds };
}

describe('the real process (child, log level info)', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('keys, the admin token and password_sha1 appear in no log line, error body, metrics or stored byte', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-secrets-'));
    const port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        VIGIL_PORT: String(port),
        VIGIL_HOST: '127.0.0.1',
        VIGIL_DATA_DIR: dataDir,
        VIGIL_ADMIN_TOKEN: ADMIN,
        VIGIL_LOG_LEVEL: 'info',
        VIGIL_INITIAL_PLAN: 'pro',
        VIGIL_RETENTION: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 1200 && !out.includes('vigil ready'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain('vigil ready');
    const base = `http://127.0.0.1:${port}`;
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const account = (await (
      await fetch(`${base}/admin/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'leak-check', plan: 'pro' }) })
    ).json()) as { id: string };
    const key = async (kind: string) =>
      (
        (await (
          await fetch(`${base}/admin/accounts/${account.id}/keys`, {
            method: 'POST',
            headers: admin,
            body: JSON.stringify({ kind, allowed_origins: ['https://a.example'] }),
          })
        ).json()) as { key: string }
      ).key;
    const secret = await key('secret');
    const publishable = await key('publishable');
    // The first-start keys are printed once on purpose; they must appear nowhere else.
    const bootstrap = [...out.matchAll(/vgl_(sk|pk)_[0-9A-Za-z]{32}/g)].map((m) => m[0]);
    expect(bootstrap.length).toBe(2);
    const { bodies } = await exercise(base, secret, publishable);
    child.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
    const secrets = [secret, publishable, ADMIN, PASSWORD_SHA1, NOT_A_KEY];
    const afterBootstrap = out.slice(out.indexOf('vigil ready'));
    expect(afterBootstrap.length).toBeGreaterThan(0);
    expectNoSecret('process output', out, secrets);
    expectNoSecret('process output after start-up', afterBootstrap, bootstrap);
    expectNoSecret('response bodies', bodies.join('\n'), [...secrets, ...bootstrap]);
    // Every file the service keeps in its data directory, the feeds folder included.
    for (const file of readdirSync(dataDir, { recursive: true, encoding: 'utf8' })) {
      if (!statSync(join(dataDir, file)).isFile()) continue;
      const bytes = readFileSync(join(dataDir, file)).toString('latin1');
      expectNoSecret(`stored file ${file}`, bytes, [...secrets, ...bootstrap]);
    }
  });
});

describe('the in-process app with a captured pino destination (no redaction configured)', () => {
  it('also on the 500 path, nothing secret is logged or answered', async () => {
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((logged += chunk.toString()), done()) });
    const logger = pino({ level: 'trace' }, sink);
    const { store, faults } = faultyStore();
    const config = loadConfig({ VIGIL_DATA_DIR: ':memory:', VIGIL_ADMIN_TOKEN: ADMIN, VIGIL_SQLITE_SYNCHRONOUS: 'normal' });
    const services = await createServices(config, { clock: new ManualClock(), store, logger });
    const vigil = await buildApp(services);
    try {
      await vigil.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(vigil.app.server.address() as { port: number }).port}`;
      const acct = await vigil.accounts.create('leak', 'pro');
      if (!acct.ok) throw new Error(acct.message);
      const secret = await vigil.accounts.createKey(acct.value.id, 'secret');
      const publishable = await vigil.accounts.createKey(acct.value.id, 'publishable', ['https://a.example']);
      if (!secret.ok || !publishable.ok) throw new Error('keys');
      const { bodies } = await exercise(base, secret.value.key, publishable.value.key);
      // An unexpected failure in the store: 500 INTERNAL, logged with its error.
      faults.commit = () => new Error('disk on fire');
      const res = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret.value.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'auth.login.failure', actor_id: 'a', ip: '203.0.113.7', password_sha1: PASSWORD_SHA1 }),
      });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(JSON.parse(text).error).toBe('INTERNAL');
      expect(text).not.toContain('disk on fire');
      expect(logged).toContain('disk on fire');
      const secrets = [secret.value.key, publishable.value.key, ADMIN, PASSWORD_SHA1, NOT_A_KEY];
      expectNoSecret('log', logged, secrets);
      expectNoSecret('bodies', [...bodies, text].join('\n'), secrets);
    } finally {
      await vigil.close();
      await services.shutdown();
    }
  });
});
