import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the thread module `name` (a file beside `from`, the caller's `import.meta.url`). Builds
 * run the compiled module; source checkouts (tests, tsx) run the TypeScript one through tsx's
 * require hook, since Node 20 applies `--import` loader hooks to the main thread only.
 */
export function startModuleThread(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options);
  const require = createRequire(from);
  const thread = fileURLToPath(new URL(`./${name}.ts`, from));
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(thread)});`;
  return new Worker(code, { ...options, eval: true });
}
