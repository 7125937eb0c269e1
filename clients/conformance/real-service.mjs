#!/usr/bin/env node
// Starts the real Vigil service (from this repository's sources) on a free port with a
// temporary data directory, provisions one account per requested plan through the admin API,
// and prints one JSON line:
//   {"base":"http://127.0.0.1:P","admin_token":"...","accounts":{"free":{"id":"acc_...","secret":"vgl_sk_...","publishable":"vgl_pk_..."}}}
// It stops the service and removes the data directory on SIGTERM, SIGINT, or when its stdin
// (if a pipe) closes.
//
//   node clients/conformance/real-service.mjs --plan free --plan pro \
//        [--publishable-origin http://127.0.0.1:5555 ...] [--plans-file plans.json] [--env NAME=VALUE ...]
//
// A plan named twice gets a second account under "<plan>-2" (then "-3", ...). Without
// --publishable-origin the publishable keys allow any origin ("*").
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fstatSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function parseArgs(argv) {
  const options = { plans: [], origins: [], plansFile: undefined, env: {} };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--plan':
        options.plans.push(value);
        i++;
        break;
      case '--publishable-origin':
        options.origins.push(value);
        i++;
        break;
      case '--plans-file':
        options.plansFile = value;
        i++;
        break;
      case '--env': {
        const at = value.indexOf('=');
        options.env[value.slice(0, at)] = value.slice(at + 1);
        i++;
        break;
      }
      default:
        throw new Error(`unknown argument ${argv[i]}; see the header of real-service.mjs`);
    }
  }
  if (options.plans.length === 0) options.plans.push('free');
  return options;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function post(url, token, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const options = parseArgs(process.argv.slice(2));
const port = await freePort();
const dataDir = mkdtempSync(join(tmpdir(), 'vigil-real-service-'));
const adminToken = randomBytes(24).toString('hex');
const base = `http://127.0.0.1:${port}`;

const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  cwd: root,
  env: {
    ...process.env,
    VIGIL_PORT: String(port),
    VIGIL_HOST: '127.0.0.1',
    VIGIL_DATA_DIR: dataDir,
    VIGIL_ADMIN_TOKEN: adminToken,
    // Every test client connects from 127.0.0.1: the per-IP cap must not hide the per-key limits.
    VIGIL_IP_LIMITS: '127.0.0.1/32=1000000',
    VIGIL_LOG_LEVEL: 'warn',
    VIGIL_RETENTION: 'off',
    ...(options.plansFile ? { VIGIL_PLANS_FILE: options.plansFile } : {}),
    ...options.env,
  },
  // The service prints the bootstrap account's keys on stdout; that account is not used here.
  stdio: ['ignore', 'ignore', 'inherit'],
});

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await Promise.race([new Promise((resolve) => child.once('exit', resolve)), delay(10_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.on('end', () => void stop());
  process.stdin.on('close', () => void stop());
  process.stdin.resume();
}
child.once('exit', (code) => {
  if (!stopping) {
    process.stderr.write(`real-service: the service exited early (${code})\n`);
    void stop(1);
  }
});

try {
  const deadline = Date.now() + 60_000;
  while (true) {
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error('the service did not become ready within 60 s');
    await delay(100);
  }
  const accounts = {};
  for (const plan of options.plans) {
    let label = plan;
    for (let n = 2; label in accounts; n++) label = `${plan}-${n}`;
    const account = await post(`${base}/admin/accounts`, adminToken, { name: `conformance ${label}`, plan });
    const secret = await post(`${base}/admin/accounts/${account.id}/keys`, adminToken, { kind: 'secret' });
    const publishable = await post(`${base}/admin/accounts/${account.id}/keys`, adminToken, {
      kind: 'publishable',
      allowed_origins: options.origins.length > 0 ? options.origins : ['*'],
    });
    accounts[label] = { id: account.id, secret: secret.key, publishable: publishable.key };
  }
  process.stdout.write(JSON.stringify({ base, admin_token: adminToken, accounts }) + '\n');
} catch (err) {
  process.stderr.write(`real-service: ${err.message}\n`);
  await stop(1);
}
