/**
 * An open-loop load at a steady rate, for latency at a given load.
 *
 * autocannon's rate mode is not used for this: it gives each connection a budget per second,
 * spent back to back from the start of the second (so "half the maximum rate" is full speed for
 * half of every second, then silence), and it records every response against an expected
 * interval of 1 ms (coordinated-omission correction with `Math.ceil(1 / rate)`), which adds a
 * synthetic sample for each millisecond of every response slower than 1 ms. Both measure
 * queueing under bursts, not the latency of a service at half its capacity.
 *
 * Here requests are due at evenly spaced times (one every 1/rate s), sent over a keep-alive pool
 * of `connections` sockets; a request that finds every socket busy waits in the pool. Latency is
 * counted from the time a request was due, so waiting for a socket counts (no coordinated
 * omission), and a server that falls behind shows it.
 */
import { Agent, request } from 'node:http';

export interface PacedResult {
  readonly sent: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Responses per second over the run. */
  readonly rate: number;
  /**
   * How late the generator itself sent requests (ms after each was due, p99): a generator short
   * of CPU sends late, and that lateness is in every latency above.
   */
  readonly sendLagP99: number;
  /** From the first request's due time to the last answer, in seconds. */
  readonly elapsedSeconds: number;
  /** Latency from the time each request was due, in ms. */
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  /** The answers of each HTTP status: how many, and their latency (ms) from the time each was due. */
  readonly byStatus: ReadonlyMap<number, { readonly count: number; readonly p50: number; readonly p99: number }>;
}

export interface PacedOptions {
  readonly port: number;
  /** Further ports of the same service (instances behind no balancer): requests go to `port` and these in turn. */
  readonly morePorts?: readonly number[];
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly payloads: readonly string[];
  readonly rate: number;
  readonly seconds: number;
  readonly connections: number;
  /**
   * Opens every socket of the pool before the run with a GET of this path on each, as clients
   * that hold keep-alive connections would have them: a burst of thousands of new connections
   * overflows the server's listen backlog, and the SYNs the kernel drops are sent again only
   * after 1, 3, 7 s, which a run would measure instead of the service.
   */
  readonly openFirst?: string;
  /** Called as the first request is due (after the sockets are opened). */
  readonly onStart?: () => void;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Opens `count` keep-alive sockets in `agent`, a few hundred connecting at a time; each is left idle in the pool. */
async function openSockets(agent: Agent, port: number, path: string, count: number): Promise<void> {
  const held: (() => void)[] = [];
  const opened: Promise<void>[] = [];
  for (let k = 0; k < count; k++) {
    // Each socket is kept busy (its response unread) until all are open, so none is reused.
    opened.push(
      new Promise<void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
          held.push(() => res.resume());
          resolve();
        });
        req.on('error', reject);
        req.end();
      }),
    );
    if (opened.length % 250 === 0) await Promise.all(opened);
  }
  await Promise.all(opened);
  for (const release of held) release();
  await new Promise((resolve) => setTimeout(resolve, 200));
}

export async function pacedLoad(options: PacedOptions): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections, maxFreeSockets: options.connections });
  if (options.openFirst !== undefined)
    for (const port of [options.port, ...(options.morePorts ?? [])]) await openSockets(agent, port, options.openFirst, options.connections);
  const total = Math.round(options.rate * options.seconds);
  const latencies = new Float64Array(total);
  const statuses = new Uint16Array(total);
  const ports = [options.port, ...(options.morePorts ?? [])];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let done = 0;
  const interval = 1000 / options.rate;

  const sendLags = new Float64Array(total);
  const send = (n: number, due: number) =>
    new Promise<void>((resolve) => {
      sendLags[n] = performance.now() - due;
      const body = options.payloads[n % options.payloads.length] as string;
      const req = request(
        {
          host: '127.0.0.1',
          port: ports[n % ports.length],
          method: 'POST',
          path: options.path,
          agent,
          headers: { ...options.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses[done] = res.statusCode ?? 0;
            latencies[done++] = performance.now() - due;
            if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) ok++;
            else non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });

  options.onStart?.();
  const started = performance.now();
  const pending: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    // A timer fires at best every millisecond: each tick sends every request due by now, each
    // stamped with its own due time.
    const tick = () => {
      const now = performance.now();
      while (next < total && started + next * interval <= now) {
        pending.push(send(next, started + next * interval));
        next++;
      }
      if (next < total) setTimeout(tick, Math.max(0, started + next * interval - performance.now()));
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const byStatus = new Map<number, { count: number; p50: number; p99: number }>();
  for (const status of new Set(statuses.subarray(0, done))) {
    const of = latencies
      .subarray(0, done)
      .filter((_, k) => statuses[k] === status)
      .sort();
    byStatus.set(status, { count: of.length, p50: percentile(of, 0.5), p99: percentile(of, 0.99) });
  }
  const sorted = latencies.subarray(0, done).sort();
  return {
    sent: total,
    ok,
    non2xx,
    errors,
    rate: Math.round((ok + non2xx) / elapsed),
    elapsedSeconds: elapsed,
    sendLagP99: percentile(sendLags.sort(), 0.99),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : 0,
    byStatus,
  };
}
