/** Starts the conformance kit's processes for the clients' tests (Node only). */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Scenario } from './harness.js';

const kit = fileURLToPath(new URL('../../conformance/', import.meta.url));

export interface Running<T> {
  readonly info: T;
  stop(): Promise<void>;
}

/** Runs `node <script> ...args`, resolves with its first stdout line parsed as JSON. */
async function startKitProcess<T>(script: string, args: string[], timeoutMs: number): Promise<Running<T>> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [kit + script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} printed nothing within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    createInterface({ input: child.stdout }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}): ${stderr}`)));
  });
  return {
    info: JSON.parse(line) as T,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        // Closing stdin is how both scripts learn that their owner is done.
        child.stdin.end();
      }),
  };
}

export const startScriptedServer = () => startKitProcess<{ port: number }>('server.mjs', [], 10_000);

export interface RealService {
  base: string;
  admin_token: string;
  accounts: Record<string, { id: string; secret: string; publishable: string }>;
}
export const startRealService = (args: string[]) => startKitProcess<RealService>('real-service.mjs', args, 90_000);

export function loadScenarios(): Scenario[] {
  const dir = kit + 'scenarios/';
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(dir + f, 'utf8')) as Scenario);
}
