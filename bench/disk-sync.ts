/**
 * The disk's own commit latency, without SQLite or the service: appends of `BYTES` (8,192: two
 * WAL pages) to a file in `BENCH_DIR` (default the temp folder, where the benchmarks keep their
 * databases), each followed by fdatasync, due at a steady `RATE` per second for `SECS` seconds.
 * A durable 202 waits for one such sync, so the p99 printed here is a floor under the service's
 * p99 at that commit rate on this disk.
 *
 *   npx tsx bench/disk-sync.ts
 *   RATE=500 (syncs per second)  SECS=10  BYTES=8192  BENCH_DIR=/path
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECS ?? 10);
const bytes = Number(process.env.BYTES ?? 8192);
const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'vigil-disk-sync-'));
const fd = openSync(join(dir, 'appends'), 'w');
const block = Buffer.alloc(bytes, 0x5a);
const latencies: number[] = [];
const started = performance.now();
for (let n = 0; performance.now() - started < seconds * 1000; n++) {
  const due = started + (n * 1000) / rate;
  // A steady rate without timers: a timer's own lateness would be counted as the disk's.
  while (performance.now() < due);
  const t = performance.now();
  writeSync(fd, block);
  fdatasyncSync(fd);
  latencies.push(performance.now() - t);
}
closeSync(fd);
rmSync(dir, { recursive: true, force: true });
latencies.sort((a, b) => a - b);
const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
console.log(
  JSON.stringify({ syncs: latencies.length, rate, bytes, p50: at(0.5), p99: at(0.99), p999: at(0.999), max: Number((latencies.at(-1) ?? 0).toFixed(1)) }),
);
