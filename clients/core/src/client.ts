import { VigilError, type Undelivered } from './errors.js';
import { uuidv7 } from './event-id.js';
import { Pacer } from './pacing.js';
import { fetchSend, realSleep, systemClock } from './transport.js';
import type {
  Answer,
  BatchResult,
  ClientOptions,
  ClientStats,
  Clock,
  Outcome,
  RiskContribution,
  RiskDecision,
  Send,
  Sleep,
  TrackResult,
  VigilEvent,
} from './types.js';

/** After the first 429 nothing but probes is sent for this long. */
export const COOLDOWN_MS = 3_600_000;
/** During a cooldown at most one probe is sent per period of this length, counted from its start. */
export const PROBE_PERIOD_MS = 300_000;
/** The longest pause an overload answer (503 with Retry-After) imposes, whatever it asks. */
export const MAX_OVERLOAD_PAUSE_MS = 60_000;

type Delivered = Exclude<Outcome, 'buffered'>;
interface Delivery {
  readonly outcome: Delivered;
  readonly status: number | null;
  readonly body: string;
}

type Counts = { -readonly [K in keyof Omit<ClientStats, 'inCooldown'>]: number };
const STAT: Record<Delivered, 'accepted' | 'rejected' | 'failed' | 'rateLimited' | 'dropped'> = {
  accepted: 'accepted',
  rejected: 'rejected',
  failed: 'failed',
  rate_limited: 'rateLimited',
  dropped: 'dropped',
};

const emptyBatch = (): BatchResult => ({ accepted: 0, rejected: 0, failed: 0, rateLimited: 0, dropped: 0, buffered: 0 });

export interface CloseOptions {
  /** Longest wait for the buffer and the requests in flight, in ms of the client's clock; then `close` resolves false. */
  timeoutMs?: number;
}

function breakdownOf(value: unknown): RiskContribution[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((c): c is RiskContribution => c !== null && typeof c === 'object' && typeof c.source === 'string' && typeof c.points === 'number')
    .map((c) => ({ source: c.source, points: c.points }));
}

function riskOf(body: string): RiskDecision | null {
  try {
    const risk = (JSON.parse(body) as { risk?: RiskDecision } | null)?.risk;
    return risk && typeof risk.score === 'number'
      ? { score: risk.score, level: risk.level, action: risk.action, breakdown: breakdownOf(risk.breakdown) }
      : null;
  } catch {
    return null;
  }
}

/**
 * The pause an answer asks for when it is an overload answer: a 503 whose `Retry-After` is a
 * whole number of seconds, or without that field a JSON body whose `retry_after` is one. Null
 * for every other answer, a 503 without either included (an ordinary 5xx).
 */
function overloadPauseMs(answer: Extract<Answer, { kind: 'answer' }>): number | null {
  if (answer.status !== 503) return null;
  let seconds: number | null = null;
  if (answer.retryAfter != null) {
    if (/^\s*\d+\s*$/.test(answer.retryAfter)) seconds = Number(answer.retryAfter);
  } else {
    try {
      const value = (JSON.parse(answer.body) as { retry_after?: unknown } | null)?.retry_after;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) seconds = value;
    } catch {
      // Not JSON: an ordinary 5xx.
    }
  }
  return seconds === null ? null : Math.min(seconds * 1000, MAX_OVERLOAD_PAUSE_MS);
}

/** The events of a batch result that were not delivered, and the outcome that names them best. */
function undelivered(result: BatchResult): { outcome: Undelivered; count: number } | null {
  const count = result.rejected + result.failed + result.rateLimited + result.dropped;
  if (count === 0) return null;
  const outcome: Undelivered = result.rateLimited > 0 ? 'rate_limited' : result.failed > 0 ? 'failed' : result.rejected > 0 ? 'rejected' : 'dropped';
  return { outcome, count };
}

/**
 * Delivers events to Vigil: single events, batches (falling back to single events when the
 * plan has no batch endpoint) or a buffer flushed by count and by time. Every public method
 * resolves to a value and never throws or rejects: a security signal must never break the
 * request that produced it.
 *
 * Every request is paced by the key's rate-limit policies (`RateLimit-Policy` of the latest
 * answer; the smallest plan before any): one that would exceed a window waits, at most
 * `maxPacingDelayMs`, or is not sent and its events are counted `pacedDropped`. So the client
 * itself never causes a 429.
 *
 * On a 429 that still comes the client stays silent for one hour, except for one probe per
 * 5-minute period (the first event produced in it); a probe answered with anything but 429 ends
 * the cooldown. Events produced during the cooldown are dropped and counted, never queued.
 *
 * A 503 with Retry-After (the service is overloaded) pauses every request for that long, at
 * most a minute: a request waits for the end of the pause when it fits its timeout, else its
 * events are given up (`failed`); buffered mode keeps its buffer and sends it after the pause.
 */
export class VigilClient {
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly batchSize: number;
  private readonly buffered: boolean;
  private readonly bufferSize: number;
  private readonly flushIntervalMs: number;
  private readonly retryBaseMs: number;
  private readonly maxPacingDelayMs: number;
  private readonly onError: ((error: VigilError) => void) | undefined;
  private readonly throwOnError: boolean;
  protected readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly send: Send;

  private cooldownStart: number | null = null;
  /** End of the overload pause (client clock, ms), or null. */
  private pausedUntil: number | null = null;
  private probedPeriod = 0;
  private batchUnavailable = false;
  private buffer: VigilEvent[] = [];
  private cancelTimer: (() => void) | null = null;
  private sending: Promise<unknown> = Promise.resolve();
  private readonly pending = new Set<Promise<unknown>>();
  protected readonly pacer = new Pacer();
  /** Until an answer named the policies, requests go one at a time: each waits for this one. */
  private serial: Promise<void> = Promise.resolve();
  private readonly sentEvents = new WeakSet<VigilEvent>();
  protected readonly counts: Counts = {
    sent: 0,
    accepted: 0,
    rejected: 0,
    failed: 0,
    rateLimited: 0,
    dropped: 0,
    paced: 0,
    pacedDropped: 0,
    retries: 0,
    probes: 0,
  };

  constructor(options: ClientOptions) {
    this.url = (options.baseUrl ?? 'http://localhost:8080').replace(/\/+$/, '');
    this.headers = { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` };
    if (options.userAgent) this.headers['user-agent'] = options.userAgent;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.maxRetries = options.maxRetries ?? 2;
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.buffered = options.mode === 'buffered';
    this.bufferSize = Math.max(1, options.bufferSize ?? 100);
    this.flushIntervalMs = options.flushIntervalMs ?? 5000;
    this.retryBaseMs = options.retryBaseMs ?? 200;
    this.maxPacingDelayMs = Math.max(0, options.maxPacingDelayMs ?? 1000);
    this.onError = options.onError;
    this.throwOnError = options.throwOnError === true;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.send = options.send ?? fetchSend;
  }

  /**
   * Sends one event (direct mode: resolves once the service answered, with its risk decision)
   * or buffers it (buffered mode: resolves at once). Callers that do not await it lose nothing.
   */
  track(event: VigilEvent): Promise<TrackResult> {
    return this.settle(this.trackResult(event), (r) =>
      r.outcome === 'accepted' || r.outcome === 'buffered' ? null : new VigilError(r.outcome, r.status, 1, { eventId: r.eventId || undefined }),
    );
  }

  private trackResult(event: VigilEvent): Promise<TrackResult> {
    let eventId = '';
    return this.guard(
      async () => {
        const e = this.withId(event);
        eventId = e.event_id as string;
        const gate = this.gate();
        if (gate === 'drop') {
          this.dropped(1);
          return { outcome: 'dropped', status: null, risk: null, eventId };
        }
        if (gate === 'send' && this.buffered) {
          if (this.enqueue([e]) > 0) return { outcome: 'failed', status: null, risk: null, eventId };
          return { outcome: 'buffered', status: null, risk: null, eventId };
        }
        const delivery = this.deliverOne(e, gate === 'probe');
        if (this.buffered) {
          void this.watch(delivery.then((r) => this.reportResult(r)));
          return { outcome: 'buffered', status: null, risk: null, eventId };
        }
        return delivery;
      },
      () => ({ outcome: 'rejected', status: null, risk: null, eventId }),
      1,
    );
  }

  /** Sends events in chunks of `batchSize` (or buffers them); resolves to what happened to them. */
  trackBatch(events: readonly VigilEvent[]): Promise<BatchResult> {
    return this.settle(this.batchResult(events), (r) => {
      const lost = undelivered(r);
      return lost && new VigilError(lost.outcome, null, lost.count, { batch: r });
    });
  }

  private batchResult(events: readonly VigilEvent[]): Promise<BatchResult> {
    return this.guard(
      async () => {
        const list = events.map((e) => this.withId(e));
        const result = emptyBatch();
        if (list.length === 0) return result;
        const gate = this.gate();
        if (gate === 'send' && this.buffered) {
          result.failed = this.enqueue(list);
          result.buffered = list.length - result.failed;
          return result;
        }
        if (gate === 'send') return this.sendEvents(list);
        result.dropped = this.dropped(gate === 'probe' ? list.length - 1 : list.length);
        if (gate === 'probe') {
          const probe = this.deliverOne(list[0] as VigilEvent, true);
          if (this.buffered) {
            void this.watch(probe.then((r) => this.reportResult(r)));
            result.buffered = 1;
          } else result[STAT[(await probe).outcome as Delivered]] += 1;
        }
        return result;
      },
      () => ({ ...emptyBatch(), rejected: Array.isArray(events) ? events.length : 0 }),
      Array.isArray(events) ? events.length : 0,
    );
  }

  /** Sends what the buffer holds and resolves once it is delivered (or given up). */
  flush(): Promise<void> {
    return this.guard(
      () => this.startFlush(),
      () => undefined,
      0,
    );
  }

  /** Resolves when no request is in flight and no flush is pending. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Flushes the buffer and waits for everything in flight; with `timeoutMs`, no longer than
   * that. Resolves true when everything was delivered or given up, false when the timeout came
   * first (what is still in flight goes on in the background).
   */
  async close(options: CloseOptions = {}): Promise<boolean> {
    const done = this.flush().then(() => this.idle().then(() => true));
    const timeoutMs = options.timeoutMs;
    if (timeoutMs === undefined) return done;
    let cancel = () => {};
    const timeout = new Promise<boolean>((resolve) => {
      cancel = this.clock.setTimer(() => resolve(false), Math.max(0, timeoutMs));
    });
    try {
      return await Promise.race([done, timeout]);
    } finally {
      cancel();
    }
  }

  stats(): ClientStats {
    return { ...this.counts, inCooldown: this.inCooldown() };
  }

  /**
   * Empties the buffer into the requests delivery would send now (batches, or single events
   * when the plan has no batch endpoint), for a transport that sends them another way: the
   * browser's page-hide beacon. Nothing during a cooldown (the events are dropped, counted).
   */
  protected drainRequests(): { url: string; body: string; count: number }[] {
    const events = this.takeBuffer();
    if (this.inCooldown()) {
      this.report(new VigilError('dropped', null, this.dropped(events.length)));
      return [];
    }
    // An overloaded service asked for a pause, and a page going away cannot wait for its end.
    if (this.pauseLeft() > 0 && events.length > 0) {
      this.counts.failed += events.length;
      this.report(new VigilError('failed', null, events.length));
      return [];
    }
    const size = this.batchUnavailable ? 1 : this.batchSize;
    const requests = [];
    let unpaced = 0;
    for (let i = 0; i < events.length; i += size) {
      const chunk = events.slice(i, i + size);
      // A page going away cannot wait: a request the policies cannot take now is not handed over.
      if (this.pacer.reserve(chunk.length, this.clock.now(), 0) === null) {
        this.counts.pacedDropped += chunk.length;
        unpaced += this.dropped(chunk.length);
        continue;
      }
      this.countSent(chunk);
      requests.push(
        this.batchUnavailable
          ? { url: this.endpoint('/v1/events'), body: JSON.stringify(chunk[0]), count: 1 }
          : { url: this.endpoint('/v1/events/batch'), body: JSON.stringify({ events: chunk }), count: chunk.length },
      );
    }
    if (unpaced > 0) this.report(new VigilError('dropped', null, unpaced));
    return requests;
  }

  /** Hands a non-delivery to `onError`; a hook that throws is ignored, delivery goes on. */
  protected report(error: VigilError | null): void {
    if (error === null || !this.onError) return;
    try {
      this.onError(error);
    } catch {
      // The application's hook must not break delivery.
    }
  }

  private reportResult(r: TrackResult): void {
    if (r.outcome !== 'accepted' && r.outcome !== 'buffered') this.report(new VigilError(r.outcome, r.status, 1, { eventId: r.eventId }));
  }

  /** Reports what a public call did not deliver and, with `throwOnError`, rejects with it. */
  private async settle<T>(pending: Promise<T>, errorOf: (result: T) => VigilError | null): Promise<T> {
    const result = await pending;
    const error = errorOf(result);
    this.report(error);
    if (error && this.throwOnError) throw error;
    return result;
  }

  private countSent(events: readonly VigilEvent[]): void {
    for (const e of events) {
      if (this.sentEvents.has(e)) continue;
      this.sentEvents.add(e);
      this.counts.sent += 1;
    }
  }

  private takeBuffer(): VigilEvent[] {
    this.cancelTimer?.();
    this.cancelTimer = null;
    const events = this.buffer;
    this.buffer = [];
    return events;
  }

  private endpoint(path: string): string {
    return this.url + path;
  }

  /** Runs a public call; an input it cannot send (not an object, not serialisable) is `rejected` events, never an exception. */
  private guard<T>(run: () => Promise<T>, fallback: () => T, events: number): Promise<T> {
    const reject = () => {
      this.counts.rejected += events;
      return fallback();
    };
    let promise: Promise<T>;
    try {
      promise = run().catch(reject);
    } catch {
      promise = Promise.resolve(reject());
    }
    return this.watch(promise);
  }

  private watch<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const forget = () => this.pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /**
   * A JSON snapshot of the event with its `event_id`: what the caller changes afterwards is not
   * sent, and an event that cannot be serialised is refused here, before it reaches a buffer.
   */
  private withId(event: VigilEvent): VigilEvent {
    if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new TypeError('an event is an object');
    const copy = JSON.parse(JSON.stringify(event)) as VigilEvent;
    if (!copy.event_id) copy.event_id = uuidv7(this.clock.now());
    return copy;
  }

  private dropped(n: number): number {
    this.counts.dropped += n;
    return n;
  }

  private inCooldown(): boolean {
    if (this.cooldownStart !== null && this.clock.now() - this.cooldownStart >= COOLDOWN_MS) this.cooldownStart = null;
    return this.cooldownStart !== null;
  }

  /** Whether an event produced now is sent, sent as this period's probe, or dropped. */
  private gate(): 'send' | 'probe' | 'drop' {
    if (!this.inCooldown()) return 'send';
    const period = Math.floor((this.clock.now() - (this.cooldownStart as number)) / PROBE_PERIOD_MS);
    if (period <= this.probedPeriod) return 'drop';
    this.probedPeriod = period;
    return 'probe';
  }

  private enterCooldown(): void {
    if (this.inCooldown()) return;
    this.cooldownStart = this.clock.now();
    this.probedPeriod = 0;
    const buffered = this.takeBuffer().length;
    if (buffered > 0) this.report(new VigilError('dropped', 429, this.dropped(buffered)));
  }

  /** Buffers events; returns how many were given up (`failed`) because a pause holds a full buffer. */
  private enqueue(events: readonly VigilEvent[]): number {
    let givenUp = 0;
    for (const e of events) {
      // A full buffer is only kept while an overload pause holds its flush: it grows no further.
      if (this.buffer.length >= this.bufferSize) {
        givenUp += 1;
        continue;
      }
      this.buffer.push(e);
      if (this.buffer.length >= this.bufferSize) this.flushWhenUnpaused();
    }
    if (this.buffer.length > 0 && !this.cancelTimer) this.cancelTimer = this.clock.setTimer(() => this.flushWhenUnpaused(), this.flushIntervalMs);
    this.counts.failed += givenUp;
    return givenUp;
  }

  /** A flush by count or by time: at once, or at the end of an overload pause longer than the timeout. */
  private flushWhenUnpaused(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    const left = this.pauseLeft();
    if (left <= this.timeoutMs) void this.startFlush();
    else this.cancelTimer = this.clock.setTimer(() => this.flushWhenUnpaused(), left);
  }

  /** Milliseconds left of the overload pause (0 when there is none). */
  private pauseLeft(): number {
    if (this.pausedUntil === null) return 0;
    const left = this.pausedUntil - this.clock.now();
    if (left <= 0) this.pausedUntil = null;
    return Math.max(0, left);
  }

  /** Queues the buffer behind earlier flushes, so batches leave in the order events arrived. */
  private startFlush(): Promise<void> {
    const events = this.takeBuffer();
    if (events.length > 0)
      this.sending = this.sending.then(async () => {
        const result = await this.sendEvents(events);
        const lost = undelivered(result);
        if (lost) this.report(new VigilError(lost.outcome, null, lost.count, { batch: result }));
      });
    return this.watch(this.sending.then(() => undefined));
  }

  private async sendEvents(events: readonly VigilEvent[]): Promise<BatchResult> {
    const result = emptyBatch();
    for (let i = 0; i < events.length;) {
      if (this.inCooldown()) {
        result.dropped += this.dropped(events.length - i);
        break;
      }
      if (this.batchUnavailable) {
        result[STAT[(await this.deliverOne(events[i] as VigilEvent, false)).outcome as Delivered]] += 1;
        i += 1;
        continue;
      }
      const chunk = events.slice(i, i + this.batchSize);
      const delivery = await this.post('/v1/events/batch', { events: chunk }, chunk, false);
      // The plan has no batch endpoint (Free): the same events go one by one, now and from now on.
      if (delivery.status === 403) {
        this.batchUnavailable = true;
        continue;
      }
      this.counts[STAT[delivery.outcome]] += chunk.length;
      result[STAT[delivery.outcome]] += chunk.length;
      i += chunk.length;
    }
    return result;
  }

  private async deliverOne(event: VigilEvent, probe: boolean): Promise<TrackResult> {
    const delivery = await this.post('/v1/events', event, [event], probe);
    this.counts[STAT[delivery.outcome]] += 1;
    return {
      outcome: delivery.outcome,
      status: delivery.status,
      risk: delivery.outcome === 'accepted' ? riskOf(delivery.body) : null,
      eventId: event.event_id as string,
    };
  }

  /** One HTTP attempt; an injected transport that throws counts as no answer. */
  private async attempt(path: string, body: string): Promise<Answer> {
    try {
      return await this.send(this.endpoint(path), this.headers, body, this.timeoutMs);
    } catch (err) {
      return { kind: 'no-answer', reason: String(err) };
    }
  }

  /**
   * Waits for the request's turn and room in the key's windows: a release to call once its
   * answer arrived, or null when its pacing wait would be longer than `maxPacingDelayMs`.
   */
  private async pace(events: number, first: boolean): Promise<(() => void) | null> {
    let release = () => {};
    if (!this.pacer.learned) {
      const previous = this.serial;
      this.serial = new Promise<void>((resolve) => (release = resolve));
      await previous;
    }
    const now = this.clock.now();
    const wait = this.pacer.reserve(events, now, this.maxPacingDelayMs);
    if (wait === null) {
      release();
      return null;
    }
    if (wait > 0) {
      if (first) this.counts.paced += events;
      await this.sleep(wait);
    }
    const takenAt = now + wait;
    return () => {
      this.pacer.settle(events, takenAt, this.clock.now());
      release();
    };
  }

  /** One request with its retries. A probe is a single attempt whose answer decides the cooldown. */
  private async post(path: string, payload: unknown, events: readonly VigilEvent[], probe: boolean): Promise<Delivery> {
    const body = JSON.stringify(payload);
    let status: number | null = null;
    for (let attempt = 0; ; attempt++) {
      // During an overload pause an attempt waits for its end only when that fits its timeout.
      const paused = this.pauseLeft();
      if (paused > this.timeoutMs) return { outcome: 'failed', status, body: '' };
      if (paused > 0) await this.sleep(paused);
      else if (attempt > 0) await this.sleep(this.retryBaseMs * 2 ** (attempt - 1) * (0.5 + this.random() / 2));
      // Another request may have met a 429 meanwhile: a cooldown stops the retries too.
      if (attempt > 0 && this.inCooldown()) return { outcome: 'dropped', status, body: '' };
      const release = await this.pace(events.length, attempt === 0);
      if (release === null) {
        if (attempt > 0) return { outcome: 'failed', status, body: '' };
        this.counts.pacedDropped += events.length;
        return { outcome: 'dropped', status: null, body: '' };
      }
      if (attempt > 0) this.counts.retries += 1;
      else {
        if (probe) this.counts.probes += 1;
        this.countSent(events);
      }
      let answer: Answer;
      try {
        answer = await this.attempt(path, body);
        if (answer.kind === 'answer') this.pacer.learn(answer.policy);
      } finally {
        release();
      }
      status = answer.kind === 'answer' ? answer.status : null;
      if (answer.kind === 'answer') {
        const pause = overloadPauseMs(answer);
        // Any other answer means the service takes requests again.
        this.pausedUntil = pause === null ? null : Math.max(this.pausedUntil ?? 0, this.clock.now() + pause);
        if (status === 429) {
          this.enterCooldown();
          return { outcome: 'rate_limited', status, body: answer.body };
        }
        if (probe) this.cooldownStart = null;
        if (answer.status < 300) return { outcome: 'accepted', status, body: answer.body };
        if (answer.status < 500) return { outcome: 'rejected', status, body: answer.body };
      }
      if (probe || attempt >= this.maxRetries) return { outcome: 'failed', status, body: '' };
    }
  }
}
