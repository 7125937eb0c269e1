import { writeFileSync } from 'node:fs';

/**
 * Names the calling thread for /proc, so `top -H`, `ps -L` and the benchmarks tell its CPU from
 * the request thread's. Linux only; elsewhere the thread keeps its inherited name. At most 15
 * characters (the kernel's limit).
 */
export function nameThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name);
  } catch {
    // Not Linux, or /proc not mounted: the name only serves observation.
  }
}
