import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Projects: every suite on the embedded default, the HTTP functional suites again in scale-out
 * mode (PostgreSQL + Redis), the dashboard in headless Chromium, the official clients (clients/*)
 * and the host agent (agent/test). Each suite that needs a server skips with a message when it is
 * absent, and fails under CI=true.
 */
// Under CI a failed test runs once more, so one unlucky schedule on a loaded machine does not fail
// the build; the test runner names every test that needed the second run as flaky. Projects do not
// inherit the root options, so each one sets it.
const retry = process.env.CI === 'true' ? 1 : 0;
// Test files spend most of their time waiting for child processes, servers and timers, so more
// files run at once than there are cores: Vitest's default (one fewer than the cores) runs one
// file at a time on a 2-core machine, which leaves most of both cores idle.
const workers = Math.max(3, availableParallelism() - 1);
const NOISY_NEIGHBOUR = 'test/http/noisy-neighbour.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: workers,
    minWorkers: workers,
    projects: [
      {
        test: {
          name: 'embedded',
          retry,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/dashboard/**', NOISY_NEIGHBOUR],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      { test: { name: 'dashboard', retry, include: ['test/dashboard/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 90_000 } },
      {
        test: {
          name: 'agent',
          retry,
          include: ['agent/test/**/*.test.ts'],
          // The agent and the service run as child processes; their timers set these bounds.
          testTimeout: 150_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'scaleout',
          retry,
          include: ['test/http/**/*.test.ts'],
          exclude: [...configDefaults.exclude, NOISY_NEIGHBOUR],
          env: { VIGIL_TEST_MODE: 'scaleout' },
          setupFiles: ['test/helpers/scaleout-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      // The noisy-neighbour test compares one account's latency with and without another's
      // attacks: it runs after every other file (groupOrder), alone on the machine, each mode in
      // turn, so that other test files' load does not read as the attacks' cost.
      {
        test: {
          name: 'noisy-neighbour',
          retry,
          include: [NOISY_NEIGHBOUR],
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'noisy-neighbour-scaleout',
          retry,
          include: [NOISY_NEIGHBOUR],
          env: { VIGIL_TEST_MODE: 'scaleout' },
          setupFiles: ['test/helpers/scaleout-setup.ts'],
          sequence: { groupOrder: 2 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The clients' tests run on their sources: the shared core resolves to its TypeScript.
        resolve: { alias: { '@vigil/client-core': fileURLToPath(new URL('./clients/core/src/index.ts', import.meta.url)) } },
        test: { name: 'clients', retry, include: ['clients/*/test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000 },
      },
    ],
  },
});
