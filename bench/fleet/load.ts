/**
 * The fleet's load generator: an open loop at a steady request rate through one keep-alive
 * agent, each request one of the mix's kinds. Every event carries its own `event_id`, and a
 * request answered 429/502/503/504 or lost with its connection is sent again, the same body,
 * as the API guide tells clients to: so "acknowledged" (a 202 for that event) can be compared
 * with the rows stored, event by event.
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { newEventId } from '../lib.js';
import { benchEvent } from '../workload.js';

export type Kind = 'single' | 'batch' | 'brute' | 'read';
export const KINDS: readonly Kind[] = ['single', 'batch', 'brute', 'read'];

export interface LoadOptions {
  readonly port: number;
  /** Secret keys of the accounts; requests take them in turn. */
  readonly keys: readonly string[];
  /** Requests per second (a batch is one request). */
  readonly rate: number;
  readonly mix: Readonly<Record<Kind, number>>;
  readonly batchSize: number;
  /** Distinct actors of the single and batch events. */
  readonly actors: number;
  /** Requests in flight at most; a request due while the agent is full is not sent (counted as `shed`). */
  readonly concurrency: number;
  readonly maxRetries: number;
  /** Distinguishes the campaign's actor and the events of one run from another's. */
  readonly runId: string;
}

export interface KindStats {
  requests: number;
  /** Final answers by status ("error" for a request whose connection failed on its last try). */
  statuses: Record<string, number>;
  /** Tries that failed and were sent again. */
  retried: number;
  /** What those tries got: a status, or "error" for a lost connection. */
  retryReasons: Record<string, number>;
  latenciesMs: number[];
}

export interface LoadResult {
  readonly seconds: number;
  readonly byKind: Record<Kind, KindStats>;
  readonly shed: number;
  /** Events answered accepted in this run. */
  readonly acknowledged: number;
  /** Events answered accepted with `degraded: true` (limits and detection on local state). */
  readonly degraded: number;
  /** Events never answered accepted (their request's last try failed). */
  readonly givenUp: number;
  /** Failed tries seen by the client, every kind: connection errors and 5xx/429 answers. */
  readonly errorsSeen: number;
  /** Bytes on the client's sockets: requests (headers and bodies) and responses. */
  readonly bytesSent: number;
  readonly bytesReceived: number;
  readonly clientCpuSeconds: number;
  /** Seconds from the run's start of the first and the last failed try, and of the last degraded answer (undefined: none). */
  readonly firstFailureSecond: number | undefined;
  readonly lastFailureSecond: number | undefined;
  readonly lastDegradedSecond: number | undefined;
  /** Per second of the run: events acknowledged, of them degraded, and failed tries. */
  readonly perSecond: { acknowledged: number; degraded: number; failedTries: number }[];
}

/** First octets of publicly routed IPv4 space (no reserved or private ranges). */
const PUBLIC_FIRST_OCTETS = [
  2, 5, 24, 31, 37, 46, 62, 77, 78, 80, 81, 82, 85, 86, 88, 89, 90, 91, 93, 94, 95, 109, 151, 176, 178, 188, 193, 194, 195, 212, 213, 217,
];

const randomIp = (): string =>
  `${PUBLIC_FIRST_OCTETS[Math.floor(Math.random() * PUBLIC_FIRST_OCTETS.length)]}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

const READ_PATHS = (runId: string): string[] => [
  '/v1/events?limit=50',
  '/v1/alerts?limit=50',
  `/v1/events?actor_id=victim-${runId}&limit=20`,
  '/v1/alerts?status=open&limit=20',
  '/v1/events?type=auth.login.*&limit=50',
];

interface Req {
  readonly kind: Kind;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly key: string;
  readonly body?: string;
  /** The event ids of the body, in order. */
  readonly ids: readonly string[];
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** The run: `sent` records every event id sent, `acked` every one answered accepted. */
export class Load {
  readonly sent = new Set<string>();
  readonly acked = new Set<string>();
  readonly actorsSeen = new Set<string>();
  private readonly agent: Agent;
  private readonly sockets = new Set<Socket>();
  private readonly stats: Record<Kind, KindStats>;
  private inFlight = 0;
  private shed = 0;
  private degraded = 0;
  private givenUp = 0;
  private errorsSeen = 0;
  private ackedRun = 0;
  private runStart = performance.now();
  private firstFailureAt: number | undefined;
  private lastFailureAt: number | undefined;
  private lastDegradedAt: number | undefined;
  private perSecond: { acknowledged: number; degraded: number; failedTries: number }[] = [];
  private n = 0;
  private readonly weights: [Kind, number][];
  private readonly reads: string[];

  constructor(private readonly options: LoadOptions) {
    this.agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
    this.stats = Object.fromEntries(KINDS.map((k) => [k, { requests: 0, statuses: {}, retried: 0, retryReasons: {}, latenciesMs: [] }])) as unknown as Record<
      Kind,
      KindStats
    >;
    const total = KINDS.reduce((s, k) => s + options.mix[k], 0);
    let acc = 0;
    this.weights = KINDS.map((k) => [k, (acc += options.mix[k] / total)]);
    this.reads = READ_PATHS(options.runId);
  }

  private pickKind(): Kind {
    const r = Math.random();
    return (this.weights.find(([, w]) => r < w) ?? this.weights[this.weights.length - 1])?.[0] as Kind;
  }

  private event(): Record<string, unknown> & { event_id: string } {
    const e: Record<string, unknown> & { event_id: string } = { ...benchEvent(this.n++, this.options.actors), event_id: newEventId() };
    if (typeof e.actor_id === 'string') this.actorsSeen.add(e.actor_id);
    return e;
  }

  private next(): Req {
    const kind = this.pickKind();
    const key = this.options.keys[this.n % this.options.keys.length] as string;
    if (kind === 'read') return { kind, method: 'GET', path: this.reads[this.n++ % this.reads.length] as string, key, ids: [] };
    if (kind === 'batch') {
      const events = Array.from({ length: this.options.batchSize }, () => this.event());
      return { kind, method: 'POST', path: '/v1/events/batch', key, body: JSON.stringify({ events }), ids: events.map((e) => e.event_id) };
    }
    const event =
      kind === 'single'
        ? this.event()
        : {
            event: 'auth.login.failure',
            event_id: newEventId(),
            actor_id: `victim-${this.options.runId}`,
            email: `victim-${this.options.runId}@example.com`,
            ip: randomIp(),
            user_agent: 'python-requests/2.31.0',
            request: { method: 'POST', path: '/login', status: 401 },
          };
    this.n++;
    return { kind, method: 'POST', path: '/v1/events', key, body: JSON.stringify(event), ids: [event.event_id as string] };
  }

  private once(req: Req): Promise<{ status: number; body: string } | Error> {
    return new Promise((resolve) => {
      const r = request(
        {
          host: '127.0.0.1',
          port: this.options.port,
          method: req.method,
          path: req.path,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${req.key}`,
            ...(req.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) }),
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (err) => resolve(err));
        },
      );
      r.on('socket', (s: Socket) => this.sockets.add(s));
      r.on('error', (err) => resolve(err));
      r.setTimeout(30_000, () => r.destroy(new Error('timeout')));
      r.end(req.body);
    });
  }

  /** Sends `req`, again on a retryable failure; records its outcome. */
  private async send(req: Req): Promise<void> {
    const stats = this.stats[req.kind];
    stats.requests++;
    for (const id of req.ids) this.sent.add(id);
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      const answer = await this.once(req);
      const retryable = answer instanceof Error || RETRY_STATUSES.has(answer.status);
      if (retryable) {
        this.firstFailureAt ??= performance.now();
        this.lastFailureAt = performance.now();
        this.second().failedTries++;
      }
      if (retryable && attempt < this.options.maxRetries) {
        this.errorsSeen++;
        stats.retried++;
        const reason = answer instanceof Error ? 'error' : String(answer.status);
        stats.retryReasons[reason] = (stats.retryReasons[reason] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
        continue;
      }
      if (retryable) this.errorsSeen++;
      const label = answer instanceof Error ? 'error' : String(answer.status);
      stats.statuses[label] = (stats.statuses[label] ?? 0) + 1;
      stats.latenciesMs.push(performance.now() - started);
      if (answer instanceof Error || answer.status !== 202) {
        this.givenUp += req.ids.length;
        return;
      }
      const parsed = JSON.parse(answer.body) as { status: string; degraded?: boolean; results?: { status: string; degraded?: boolean }[] };
      const results = req.kind === 'batch' ? (parsed.results ?? []) : [parsed];
      req.ids.forEach((id, i) => {
        const result = results[i];
        if (result?.status === 'accepted') {
          this.acked.add(id);
          this.ackedRun++;
          this.second().acknowledged++;
          if (result.degraded) {
            this.degraded++;
            this.second().degraded++;
            this.lastDegradedAt = performance.now();
          }
        } else this.givenUp++;
      });
      return;
    }
  }

  /** Runs for `seconds`; `at` callbacks run once their second has come (the faults). */
  async run(seconds: number, at: { second: number; action: () => Promise<void> }[] = []): Promise<LoadResult> {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    this.runStart = t0;
    this.firstFailureAt = this.lastFailureAt = this.lastDegradedAt = undefined;
    this.perSecond = [];
    const pending = new Set<Promise<void>>();
    const actions: Promise<void>[] = [];
    const todo = [...at].sort((a, b) => a.second - b.second);
    let due = 0;
    let last = t0;
    const bytesBefore = this.bytes();
    while (performance.now() - t0 < seconds * 1000) {
      const now = performance.now();
      due += ((now - last) / 1000) * this.options.rate;
      last = now;
      while (todo.length > 0 && (now - t0) / 1000 >= (todo[0]?.second ?? Infinity)) actions.push((todo.shift() as (typeof todo)[number]).action());
      for (; due >= 1; due--) {
        if (this.inFlight >= this.options.concurrency) {
          this.shed++;
          continue;
        }
        this.inFlight++;
        const p = this.send(this.next()).finally(() => {
          this.inFlight--;
          pending.delete(p);
        });
        pending.add(p);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(pending);
    await Promise.all(actions);
    const elapsed = (performance.now() - t0) / 1000;
    const used = process.cpuUsage(cpu);
    const bytes = this.bytes();
    return {
      seconds: elapsed,
      byKind: this.takeStats(),
      shed: this.takeCounter('shed'),
      acknowledged: this.takeCounter('ackedRun'),
      degraded: this.takeCounter('degraded'),
      givenUp: this.takeCounter('givenUp'),
      errorsSeen: this.takeCounter('errorsSeen'),
      bytesSent: bytes.sent - bytesBefore.sent,
      bytesReceived: bytes.received - bytesBefore.received,
      clientCpuSeconds: (used.user + used.system) / 1e6,
      firstFailureSecond: this.secondOf(this.firstFailureAt),
      lastFailureSecond: this.secondOf(this.lastFailureAt),
      lastDegradedSecond: this.secondOf(this.lastDegradedAt),
      perSecond: Array.from({ length: this.perSecond.length }, (_, i) => this.perSecond[i] ?? { acknowledged: 0, degraded: 0, failedTries: 0 }),
    };
  }

  /** The counters of the current second of the run. */
  private second(): { acknowledged: number; degraded: number; failedTries: number } {
    const i = Math.floor((performance.now() - this.runStart) / 1000);
    return (this.perSecond[i] ??= { acknowledged: 0, degraded: 0, failedTries: 0 });
  }

  private secondOf(at: number | undefined): number | undefined {
    return at === undefined ? undefined : Math.round((at - this.runStart) / 100) / 10;
  }

  private takeStats(): Record<Kind, KindStats> {
    const out = structuredClone(this.stats);
    for (const k of KINDS) this.stats[k] = { requests: 0, statuses: {}, retried: 0, retryReasons: {}, latenciesMs: [] };
    return out;
  }

  private takeCounter(name: 'shed' | 'degraded' | 'givenUp' | 'errorsSeen' | 'ackedRun'): number {
    const v = this[name];
    this[name] = 0;
    return v;
  }

  private bytes(): { sent: number; received: number } {
    let sent = 0;
    let received = 0;
    for (const s of this.sockets) {
      sent += s.bytesWritten;
      received += s.bytesRead;
    }
    return { sent, received };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The q-quantile of `values` (ms, one decimal), 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number) * 10) / 10;
}

/** `single=60,batch=10,brute=15,read=15` as weights. */
export function parseMix(text: string): Record<Kind, number> {
  const mix: Record<Kind, number> = { single: 0, batch: 0, brute: 0, read: 0 };
  for (const part of text.split(',')) {
    const [name = '', value = ''] = part.split('=');
    if (!(KINDS as readonly string[]).includes(name) || !/^\d+(\.\d+)?$/.test(value))
      throw new Error(`--mix: "${part}" is not kind=weight (kinds: ${KINDS.join(', ')})`);
    mix[name as Kind] = Number(value);
  }
  if (KINDS.every((k) => mix[k] === 0)) throw new Error('--mix: every weight is 0');
  return mix;
}
