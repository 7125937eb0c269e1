import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from './service.js';

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
