import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects: every suite on the embedded default, the HTTP functional suites again
 * in scale-out mode (PostgreSQL + Redis), and the dashboard in headless Chromium. Each suite that needs a server skips with a
 * message when it is absent, and fails under CI=true.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'embedded',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/dashboard/**'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      { test: { name: 'dashboard', include: ['test/dashboard/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 90_000 } },
      {
        test: {
          name: 'scaleout',
          include: ['test/http/**/*.test.ts'],
          env: { VIGIL_TEST_MODE: 'scaleout' },
          setupFiles: ['test/helpers/scaleout-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
