/**
 * What handing commit groups to another thread costs, without SQLite: the request thread posts a
 * group of G events (the 11 statement parameters of an events row each, with a 1 KB document)
 * and waits for the thread's answer, as the commit path does; CPU per event of the posting thread
 * (building the rows taken out) and of the receiving thread, from /proc/thread-self/stat (10 ms
 * ticks). Three ways to hand the group over:
 *   clone     postMessage of the parameter arrays (structured clone; what the service does)
 *   binary    the parameters encoded into one ArrayBuffer (UTF-8 text, lengths, numbers) and
 *             transferred, decoded by the receiver into the same arrays
 *   atomics   the arrays over a MessageChannel whose receiver blocks in Atomics.wait and takes
 *             the messages with receiveMessageOnPort (no event loop turn on its side)
 *   npx tsx bench/handoff.ts
 *   SIZES=1,4,14,100 (group sizes)  MODES=clone,binary,atomics  ROUNDS=3 (alternating)  SECS=3 per run
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';

const GROUPS = (process.env.SIZES ?? '1,4,14,100').split(',').map(Number);
const MODES = (process.env.MODES ?? 'clone,binary,atomics').split(',');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECS = Number(process.env.SECS ?? 3);

/** µs of CPU the calling thread has used. */
function threadCpuUs(): number {
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

// The receiving thread, as plain JavaScript (a worker runs it without the TypeScript loader).
const RECEIVER = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
${threadCpuUs.toString()}
const decoder = new TextDecoder();
function decode(buffer) {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const rows = new Array(view.getUint32(0));
  const width = view.getUint32(4);
  let at = 8;
  for (let i = 0; i < rows.length; i++) {
    const row = new Array(width);
    for (let j = 0; j < width; j++) {
      const kind = bytes[at];
      if (kind === 1) { const length = view.getUint32(at + 1); row[j] = decoder.decode(bytes.subarray(at + 5, at + 5 + length)); at += 5 + length; }
      else if (kind === 2) { row[j] = view.getFloat64(at + 1); at += 9; }
      else { row[j] = null; at += 1; }
    }
    rows[i] = row;
  }
  return rows;
}
let touched = 0;
function take(message) {
  if (message.stop) { parentPort.postMessage({ cpuUs: threadCpuUs(), touched }); return false; }
  const rows = message.rows ?? decode(message.buffer);
  for (const row of rows) for (const value of row) touched += typeof value === 'string' ? value.length : 1;
  parentPort.postMessage(true);
  return true;
}
if (workerData.mode === 'atomics') {
  const signal = new Int32Array(workerData.signal);
  let seen = 0;
  for (let open = true; open; ) {
    Atomics.wait(signal, 0, seen);
    seen = Atomics.load(signal, 0);
    for (let got; open && (got = receiveMessageOnPort(workerData.port)); ) open = take(got.message);
  }
} else {
  parentPort.on('message', (message) => { if (!take(message)) parentPort.removeAllListeners('message'); });
}
`;

const encoder = new TextEncoder();
function encode(rows: readonly (readonly unknown[])[]): ArrayBuffer {
  let size = 8;
  for (const row of rows) for (const value of row) size += typeof value === 'string' ? 5 + value.length * 3 : 9;
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  view.setUint32(0, rows.length);
  view.setUint32(4, rows[0]?.length ?? 0);
  let at = 8;
  for (const row of rows)
    for (const value of row) {
      if (typeof value === 'string') {
        const { written } = encoder.encodeInto(value, bytes.subarray(at + 5));
        bytes[at] = 1;
        view.setUint32(at + 1, written);
        at += 5 + written;
      } else if (typeof value === 'number') {
        bytes[at] = 2;
        view.setFloat64(at + 1, value);
        at += 9;
      } else at += 1;
    }
  return buffer;
}

const filler = 'x'.repeat(900);
const row = (n: number): unknown[] => [
  `evt_01M8DRJKKFQ5KZ1D68R${n}`,
  'acc_0123456789abcdef',
  'auth.login.success',
  null,
  1_764_222_313_071 + n,
  1_764_222_313_071 + n,
  `user-${n % 20_000}`,
  `198.51.100.${n % 250}`,
  10,
  '[]',
  `{"id":"evt_01M8DRJKKFQ5KZ1D68R${n}","event":"auth.login.success","metadata":{"note":"${filler}${n}"}}`,
];
const groupOf = (first: number, size: number) => Array.from({ length: size }, (_, k) => row(first + k));

async function run(mode: string, size: number): Promise<{ poster: number; receiver: number }> {
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const atomics = mode === 'atomics';
  const worker = new Worker(RECEIVER, {
    eval: true,
    workerData: { mode, signal: signal.buffer, port: atomics ? port2 : undefined },
    transferList: atomics ? [port2] : [],
  });
  await new Promise((resolve) => worker.once('online', resolve));
  const send = (message: unknown, transfer: ArrayBuffer[] = []) => {
    if (!atomics) return worker.postMessage(message, transfer);
    port1.postMessage(message, transfer);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  let events = 0;
  const start = threadCpuUs();
  for (const end = Date.now() + SECS * 1000; Date.now() < end; events += size) {
    const rows = groupOf(events, size);
    const answered = new Promise((resolve) => worker.once('message', resolve));
    if (mode === 'binary') {
      const buffer = encode(rows);
      send({ buffer }, [buffer]);
    } else send({ rows });
    await answered;
  }
  const posted = threadCpuUs() - start;
  const stopped = new Promise<{ cpuUs: number }>((resolve) => worker.once('message', resolve));
  send({ stop: true });
  const { cpuUs } = await stopped;
  await worker.terminate();
  port1.close();
  const building = threadCpuUs();
  for (let n = 0; n < events; n += size) groupOf(n, size);
  const built = threadCpuUs() - building;
  return { poster: (posted - built) / events, receiver: cpuUs / events };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const table: Record<string, string | number>[] = [];
for (const size of GROUPS) {
  const runs = new Map<string, { poster: number; receiver: number }[]>(MODES.map((mode) => [mode, []]));
  for (let round = 0; round < ROUNDS; round++) for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) runs.get(mode)!.push(await run(mode, size));
  for (const [mode, results] of runs) {
    const poster = median(results.map((r) => r.poster));
    const receiver = median(results.map((r) => r.receiver));
    table.push({
      group: size,
      mode,
      'posting thread µs/event': poster.toFixed(1),
      'receiving thread µs/event': receiver.toFixed(1),
      'both µs/event': (poster + receiver).toFixed(1),
    });
  }
}
console.table(table);
