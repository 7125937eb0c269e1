import { createHash } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { EventBuffer, PendingEvent } from './buffer.js';
import type { Logger } from './log.js';

export interface SenderOptions {
  readonly server: string;
  readonly key: string;
  readonly batchSize: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly requestTimeoutMs: number;
  readonly idlePollMs: number;
}

/** Full jitter: a uniform wait in [0, min(max, base * 2^attempt)], so many agents do not retry in step. */
export function fullJitter(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30)));
}

/** Retry-After in whole seconds (or an HTTP date), as milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * What the service taught the sender about the plan (the batch size it accepts, or no batch
 * endpoint), kept in the buffer so a restart does not send a refused batch again. It belongs to
 * one server and key, and is forgotten after a day so an upgraded plan gets full batches again.
 */
interface LearnedDelivery {
  readonly target: string;
  readonly batchSize: number;
  readonly singles: boolean;
  readonly at: number;
}

const LEARNED_STATE_KEY = 'delivery.learned';
export const LEARNED_DELIVERY_MS = 86_400_000;

/** The server and key a learned delivery belongs to, as a hash: the key itself is never written to the buffer. */
const targetOf = (server: string, key: string): string => createHash('sha256').update(`${server}\n${key}`).digest('hex').slice(0, 32);

type Outcome =
  | { kind: 'acked'; seqs: number[]; dropped: number }
  | { kind: 'retry'; waitMs: number; error: string; floorMs?: number }
  | { kind: 'batch_unavailable' }
  | { kind: 'batch_too_large' }
  | { kind: 'invalid'; indexes: Map<number, string> };

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown> | undefined;
  readonly retryAfter: string | null;
}

/**
 * Drains the buffer to the service: batches of the plan's size (single events when the plan
 * has no batch endpoint), exponential back-off with full jitter on 429 and 503 (never sooner than
 * Retry-After), other 5xx and network errors. A row is deleted only after a 202 for it.
 */
export class Sender {
  private batchSize: number;
  private singles = false;
  private attempt = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private readonly httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 1 });

  constructor(
    private readonly buffer: EventBuffer,
    private readonly opts: SenderOptions,
    private readonly log: Logger,
  ) {
    this.batchSize = opts.batchSize;
    const learned = buffer.getState<LearnedDelivery>(LEARNED_STATE_KEY);
    if (learned && learned.target === this.target() && Date.now() - learned.at < LEARNED_DELIVERY_MS) {
      this.batchSize = Math.max(1, Math.min(learned.batchSize, opts.batchSize));
      this.singles = learned.singles;
    }
    buffer.onAppend(() => this.wake?.());
  }

  private target(): string {
    return targetOf(this.opts.server, this.opts.key);
  }

  private rememberDelivery(): void {
    const learned: LearnedDelivery = { target: this.target(), batchSize: this.batchSize, singles: this.singles, at: Date.now() };
    this.buffer.setState(LEARNED_STATE_KEY, learned);
  }

  start(): void {
    this.loop = this.run();
  }

  /** Stops after the request in flight; unsent rows stay in the buffer for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.inFlight?.abort();
    this.wake?.();
    await this.loop;
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private sleep(ms: number, wakeOnAppend: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        this.wake = undefined;
        resolve();
      };
      this.timer = setTimeout(done, ms);
      this.wake = wakeOnAppend ? done : () => (this.stopped ? done() : undefined);
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const rows = this.buffer.pending(this.singles ? 1 : this.batchSize);
      if (rows.length === 0) {
        await this.sleep(this.opts.idlePollMs, true);
        continue;
      }
      const outcome = await this.deliver(rows);
      if (this.stopped && outcome.kind === 'retry') break;
      switch (outcome.kind) {
        case 'acked':
          this.buffer.acknowledge(outcome.seqs, outcome.dropped);
          if (this.attempt > 0) this.buffer.noteError(null);
          this.attempt = 0;
          break;
        case 'batch_unavailable':
          this.log.info('the plan has no batch endpoint: sending events one by one');
          this.singles = true;
          this.rememberDelivery();
          break;
        case 'batch_too_large':
          this.batchSize = Math.max(1, Math.floor(this.batchSize / 2));
          this.log.info('batch over the plan limit: smaller batches', { batch_size: this.batchSize });
          this.rememberDelivery();
          break;
        case 'invalid':
          for (const [i, reason] of outcome.indexes) {
            const row = rows[i];
            if (row === undefined) continue;
            this.log.warn('event rejected as invalid; kept in the rejected table', { event_id: row.eventId, reason });
            this.buffer.reject(row, reason);
          }
          break;
        case 'retry': {
          this.attempt++;
          const wait = Math.max(outcome.waitMs, outcome.floorMs ?? 0);
          this.buffer.noteError(outcome.error);
          this.log.warn('send failed; retrying', { error: outcome.error, wait_ms: wait, attempt: this.attempt, pending: this.buffer.depth });
          await this.sleep(wait, false);
          break;
        }
      }
    }
  }

  private backoff(): number {
    return fullJitter(this.attempt, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
  }

  /** One POST over a kept-alive connection (node:http rather than fetch: about 10 MB less resident memory). */
  private post(path: string, body: string): Promise<Reply> {
    const url = new URL(this.opts.server + path);
    const secure = url.protocol === 'https:';
    return new Promise<Reply>((resolve, reject) => {
      const controller = new AbortController();
      this.inFlight = controller;
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          agent: secure ? this.httpsAgent : this.httpAgent,
          headers: { authorization: `Bearer ${this.opts.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          signal: controller.signal,
          timeout: this.opts.requestTimeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            let parsed: Record<string, unknown> | undefined;
            try {
              const text = Buffer.concat(chunks).toString('utf8');
              parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
            } catch {
              parsed = undefined;
            }
            const retryAfter = res.headers['retry-after'];
            resolve({ status: res.statusCode ?? 0, body: parsed, retryAfter: typeof retryAfter === 'string' ? retryAfter : null });
          });
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end(body);
    }).finally(() => {
      this.inFlight = undefined;
    });
  }

  private async deliver(rows: readonly PendingEvent[]): Promise<Outcome> {
    const single = this.singles;
    let reply: Reply;
    try {
      reply = single
        ? await this.post('/v1/events', (rows[0] as PendingEvent).body)
        : await this.post('/v1/events/batch', `{"events":[${rows.map((r) => r.body).join(',')}]}`);
    } catch (err) {
      return { kind: 'retry', waitMs: this.backoff(), error: `network: ${(err as { code?: string }).code ?? (err as Error).message}` };
    }
    const { status, body } = reply;
    const code = typeof body?.error === 'string' ? body.error : undefined;
    if (status === 202) {
      const results = single ? [body] : ((body?.results as unknown[] | undefined) ?? []);
      const dropped = results.filter((r) => (r as { status?: string } | undefined)?.status === 'dropped').length;
      return { kind: 'acked', seqs: rows.map((r) => r.seq), dropped };
    }
    if (status === 429) {
      return { kind: 'retry', waitMs: this.backoff(), floorMs: retryAfterMs(reply.retryAfter) ?? 1000, error: 'rate limited (429)' };
    }
    // An overloaded service (503 with Retry-After) is waited out, but at most the back-off's
    // maximum, so a broken proxy cannot park the agent for days; a 503 without it is a 5xx.
    const overloadedFor = status === 503 ? retryAfterMs(reply.retryAfter) : undefined;
    if (overloadedFor !== undefined) {
      const floorMs = Math.min(overloadedFor, this.opts.backoffMaxMs);
      return { kind: 'retry', waitMs: this.backoff(), floorMs, error: `HTTP 503${code ? ' ' + code : ''} (retry after ${Math.ceil(floorMs / 1000)} s)` };
    }
    if (status === 403 && code === 'PLAN_UPGRADE_REQUIRED' && !single) return { kind: 'batch_unavailable' };
    if (status === 400 && code === 'BATCH_TOO_LARGE' && !single && rows.length > 1) return { kind: 'batch_too_large' };
    if (status === 413 && !single && rows.length > 1) return { kind: 'batch_too_large' };
    if ((status === 400 && code === 'INVALID_EVENT') || status === 413) {
      const indexes = new Map<number, string>();
      const details = Array.isArray(body?.details) ? (body.details as { index?: number; field?: string; message?: string }[]) : [];
      for (const d of details) {
        const at = single ? 0 : d.index;
        if (typeof at === 'number') indexes.set(at, `${d.field ?? ''}: ${d.message ?? ''}`);
      }
      if (indexes.size === 0 && (single || rows.length === 1)) indexes.set(0, `${status} ${code ?? ''} ${String(body?.message ?? '')}`.trim());
      if (indexes.size > 0) return { kind: 'invalid', indexes };
    }
    // 401/403 (key revoked or wrong), 5xx, anything unexpected: keep every row and retry later.
    return { kind: 'retry', waitMs: this.backoff(), error: `HTTP ${status}${code ? ' ' + code : ''}` };
  }
}
