/**
 * What an operator sees of the service's life: the first start's keys and how to let a browser
 * use the publishable one, and the last line of a shutdown. Real child processes.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { cliMain } from '../../src/cli/main.js';
import { freePort, startService, tempDir, type Service } from './service.js';
import { until } from '../helpers/until.js';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('service lifecycle', () => {
  const running: Service[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });

  it('first start prints the keys and the command that lets a browser origin use the publishable one; that command works', { timeout: 120_000 }, async () => {
    const dir = tempDir('vigil-first-');
    const service = await startService(dir);
    running.push(service);
    const printed = service.lines.join('\n');
    const publishable = /publishable key: (vgl_pk_[0-9A-Za-z]{32}) \(id (key_[0-9A-Z]{26})\)/.exec(printed);
    expect(publishable).not.toBeNull();
    const command = /npx vigil (keys set-origins key_[0-9A-Z]{26} --origins https:\/\/app\.example\.com)/.exec(printed);
    expect(command?.[1]).toContain(publishable?.[2] as string);
    expect(printed).toContain(`PATCH /admin/keys/${publishable?.[2] as string} {"allowed_origins": ["https://app.example.com"]}`);

    const fromBrowser = async () =>
      (
        await fetch(`${service.base}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${publishable?.[1] as string}`, origin: 'https://app.example.com', 'content-type': 'application/json' },
          body: JSON.stringify({ event: 'auth.login' }),
        })
      ).status;
    expect(await fromBrowser()).toBe(403);
    // The printed command, run as the operator would (same data directory), while the service runs.
    const saved = process.env.VIGIL_DATA_DIR;
    process.env.VIGIL_DATA_DIR = dir;
    try {
      expect(await cliMain((command?.[1] as string).split(' '))).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.VIGIL_DATA_DIR;
      else process.env.VIGIL_DATA_DIR = saved;
    }
    // The service's key cache lives 2 seconds.
    let status = 0;
    const poll = setInterval(
      () =>
        void fromBrowser().then(
          (s) => (status = s),
          () => undefined,
        ),
      200,
    );
    try {
      await until(() => status === 202, 'the origin is admitted', 10_000, 50);
    } finally {
      clearInterval(poll);
    }
  });

  it('SIGTERM: "shutting down", then a last line saying the drain finished, then exit 0', { timeout: 120_000 }, async () => {
    const service = await startService(tempDir('vigil-drain-'));
    running.push(service);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const logged = service.lines.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; drainMs?: number }) : { msg: l }));
    const stopping = logged.findIndex((l) => l.msg.startsWith('shutting down'));
    expect(stopping).toBeGreaterThanOrEqual(0);
    expect(logged.at(-1)?.msg).toBe('shutdown complete: requests drained, events committed, connections closed');
    expect(typeof logged.at(-1)?.drainMs).toBe('number');
    expect(service.stderr).toEqual([]);
  });
});

describe('npm start', () => {
  it('runs the service built by npm install, without building again', () => {
    const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    // `exec`: the shell npm runs the script in becomes the service, so npm's SIGTERM reaches it.
    expect(scripts.start).toMatch(/^exec node [^&|;]*dist\/src\/main\.js$/);
    expect(scripts.prestart).toBeUndefined();
    expect(scripts.poststart).toBeUndefined();
    expect(scripts.prepare).toBe('npm run build');
    expect(scripts.dev).toBe('tsx watch src/main.ts');
  });

  it('starts the built service; SIGTERM to npm reaches the service, which shuts down cleanly', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        VIGIL_PORT: String(port),
        VIGIL_HOST: '127.0.0.1',
        VIGIL_DATA_DIR: tempDir('vigil-npm-start-'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await until(() => lines.some((l) => l.includes('"vigil ready"')), 'vigil ready', 60_000, 50);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(lines.join('\n')).not.toMatch(/\btsc\b|vite build/);
    } finally {
      // npm passes the signal on to the service and ends with it.
      child.kill('SIGTERM');
    }
    await exited;
    await until(() => lines.some((l) => l.includes('shutdown complete')), 'the service logged the end of its shutdown', 30_000, 50);
  });
});
