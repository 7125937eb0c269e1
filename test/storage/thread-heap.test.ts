import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Runs in a child process started with a semi-space size for the request thread, as `npm start`
 * starts the service: starts a thread that keeps part of what it allocates alive, as the writer keeps
 * a commit group, and reports the young generation (V8's new space) of the thread and of the
 * process's own heap, in MB.
 */
const probe = (useLimits: boolean) => `
import { Worker } from 'node:worker_threads';
import { getHeapSpaceStatistics } from 'node:v8';
import { youngGenerationLimits } from '${pathToFileURL(join(process.cwd(), 'src/storage/thread-heap.ts')).href}';
const newSpaceMb = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
const code = \`
  const { parentPort } = require('node:worker_threads');
  const { getHeapSpaceStatistics } = require('node:v8');
  let kept = [];
  for (let round = 0; round < 3000; round++) {
    kept.push(Array.from({ length: 1000 }, (_, i) => ({ i, text: 'x' + i })));
    if (kept.length > 40) kept = kept.slice(20);
  }
  parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576);
\`;
const worker = new Worker(code, { eval: true, ...(${useLimits} ? { resourceLimits: youngGenerationLimits(12) } : {}) });
worker.once('message', (thread) => {
  console.log(JSON.stringify({ thread, process: newSpaceMb() }));
  process.exit(0);
});
`;

const dir = mkdtempSync(join(tmpdir(), 'vigil-thread-heap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(useLimits: boolean): { thread: number; process: number } {
  const file = join(dir, `probe-${String(useLimits)}.mjs`);
  writeFileSync(file, probe(useLimits));
  const child = spawnSync(process.execPath, ['--max-semi-space-size=32', '--min-semi-space-size=32', '--import', 'tsx', file], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as { thread: number; process: number };
}

describe('a thread’s young generation', () => {
  it('is the size its limits give once youngGenerationLimits cleared the process’s flags, which the process’s own heap keeps', () => {
    const unlimited = run(false);
    // Without it the flags override the thread's limits: two 32 MB semi-spaces.
    expect(unlimited.thread).toBeGreaterThanOrEqual(32);
    const limited = run(true);
    // 12 MB of young generation: two 4 MB semi-spaces.
    expect(limited.thread).toBeLessThanOrEqual(8);
    expect(limited.process).toBe(unlimited.process);
    expect(limited.process).toBeGreaterThanOrEqual(32);
  });
});
