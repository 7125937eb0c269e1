import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startService, tempDir } from './service.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function run(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', VIGIL_DATA_DIR: tempDir('vigil-start-'), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('start-up configuration errors', () => {
  it.each([
    ['VIGIL_PORT', 'eighty'],
    ['VIGIL_PORT', '70000'],
    ['VIGIL_LOG_LEVEL', 'loud'],
  ])('%s=%s: exits non-zero with one clear stderr line naming it', { timeout: 60_000 }, (variable, value) => {
    const result = run({ [variable]: value });
    expect(result.status).not.toBe(0);
    expect(result.status).not.toBeNull();
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^vigil: configuration error: ${variable} `));
    expect(lines[0]).not.toMatch(/\bat .+:\d+/);
    expect(result.stdout).toBe('');
  });
});

describe('a busy port', () => {
  it('exits with one line naming VIGIL_PORT and creates nothing, so the next start on a free port is the first start', { timeout: 120_000 }, async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dir = tempDir('vigil-busy-');
    try {
      const result = run({ VIGIL_DATA_DIR: dir, VIGIL_HOST: '127.0.0.1', VIGIL_PORT: String(port) });
      expect(result.status).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `vigil: cannot listen on 127.0.0.1:${port}: another program uses this port. Set VIGIL_PORT (and VIGIL_HOST) to a free port, e.g. VIGIL_PORT=8081 npm start`,
      ]);
      expect(result.stdout).not.toContain('secret key');
    } finally {
      blocker.close();
    }
    const service = await startService(dir);
    try {
      expect(service.lines.join('\n')).toMatch(/Vigil created the first account \(acc_[0-9A-Z]{26}, plan [a-z]+\)/);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });
});
