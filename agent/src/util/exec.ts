import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True when `name` is an executable on PATH (or an executable path). */
export function commandExists(name: string): boolean {
  const dirs = name.includes('/') ? [''] : (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/sbin']);
  return dirs.some((d) => {
    try {
      accessSync(d ? join(d, name) : name, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs a command and resolves with its stdout; rejects on failure or timeout. */
export function run(file: string, args: readonly string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}
