/**
 * Admission of ingestion requests into the pipeline, by the body bytes in flight (as each
 * request's Content-Length announces them) and the requests in flight, with a bounded wait for a
 * turn.
 *
 * A request that has been admitted has its body read, parsed, validated, enriched, detected and
 * scored, and its objects live until its response is done. When clients send faster than the
 * process can ingest (many connections, or batches), every waiting request would otherwise be
 * read and processed at once and wait for its commit fully built: that live set outgrows V8's
 * young generation, survives into the old one and makes every major GC mark it. Past the budget,
 * requests wait here before their body is read (routes/ingest.ts admits them in preParsing): the
 * body stays in the connection's buffers, outside the JavaScript heap, and Node stops reading
 * the socket once its stream buffer is full. They wait first come first served and enter as
 * earlier ones finish. A request alone in flight is always admitted, whatever its size, so no
 * body that the size limits accept waits forever.
 *
 * The requests in flight are bounded too: an admitted request waits for its commit with every
 * other one in flight, so by Little's law its time in the pipeline is their number over the rate
 * the process finishes them; at its capacity, that number sets the latency of accepted requests.
 *
 * The wait is bounded, so that under a sustained load above what the process ingests the
 * requests it accepts keep a bounded latency and the others get a fast answer instead of an
 * ever longer queue: a request that finds `maxWaiting` requests waiting, or a queue whose head
 * has waited longer than `maxWaitMs`, or a queue that the observed drain rate would not bring it
 * through within `maxWaitMs`, is refused at once (503 OVERLOADED), with no work done for it.
 */

/** Why a request was refused admission: the waiting requests' count, or the wait it would have. */
export type OverloadReason = 'waiting_full' | 'wait_too_long';

/** A refused admission: the request is answered 503 at once and never enters the pipeline. */
export interface AdmissionRefused {
  readonly refused: OverloadReason;
}

const WAITING_FULL: AdmissionRefused = { refused: 'waiting_full' };
const WAIT_TOO_LONG: AdmissionRefused = { refused: 'wait_too_long' };

export interface AdmissionLimits {
  /** Body bytes in the pipeline at once. */
  readonly budgetBytes: number;
  /** Requests in the pipeline at once (by default no bound but the bytes'). */
  readonly maxInFlight?: number;
  /** Requests that may wait for their turn at once; the next one is refused. */
  readonly maxWaiting: number;
  /** The longest a request is expected to wait for its turn, in ms; 0: no bound (only `maxWaiting`). */
  readonly maxWaitMs: number;
}

/** Retry-After of a refused request: whole seconds in this range. */
export const RETRY_AFTER_MIN_S = 1;
export const RETRY_AFTER_MAX_S = 30;

/** Rates are measured over windows of at least this long; a window this much longer starts afresh. */
const RATE_WINDOW_MS = 250;
const RATE_STALE_MS = 2_000;

/**
 * Events per second as a moving average over windows of at least RATE_WINDOW_MS; counting is one
 * addition, the rate is worked out only when asked for.
 */
class RateMeter {
  private count = 0;
  private windowStart: number;
  private rate = 0;

  constructor(now: number) {
    this.windowStart = now;
  }

  add(): void {
    this.count++;
  }

  perSecond(now: number): number {
    const elapsed = now - this.windowStart;
    if (elapsed < RATE_WINDOW_MS) return this.rate;
    const current = (this.count * 1_000) / elapsed;
    // A window long past says nothing of the one before it.
    this.rate = elapsed >= RATE_STALE_MS ? current : (this.rate + current) / 2;
    this.count = 0;
    this.windowStart = now;
    return this.rate;
  }
}

/**
 * The rate at which requests finish while others wait for their turn: the process's drain rate
 * when it is saturated. Only the time during which requests waited counts, so idle time before a
 * burst does not make the process look slow; the last rate measured is kept between bursts.
 */
class DrainMeter {
  private count = 0;
  private busyMs = 0;
  private last: number | undefined;
  rate = 0;

  /** A request finished while others waited. */
  finished(now: number): void {
    if (this.last !== undefined) {
      this.busyMs += now - this.last;
      this.count++;
      if (this.busyMs >= RATE_WINDOW_MS) {
        const current = (this.count * 1_000) / this.busyMs;
        this.rate = this.rate === 0 ? current : (this.rate + current) / 2;
        this.count = 0;
        this.busyMs = 0;
      }
    }
    this.last = now;
  }

  /** A request finished with none waiting: the saturated stretch has ended. */
  idle(): void {
    this.last = undefined;
  }
}

interface Waiting {
  readonly bytes: number;
  readonly since: number;
  readonly enter: () => void;
}

export class IngestAdmission {
  private inFlight = 0;
  private requestsInFlight = 0;
  private readonly waiting: Waiting[] = [];
  private head = 0;
  private readonly drain = new DrainMeter();
  private readonly refusals: RateMeter;
  /** Every finished request, for a Retry-After before any saturated stretch was measured. */
  private readonly completions: RateMeter;
  private lastRefusal = Number.NEGATIVE_INFINITY;

  constructor(
    readonly limits: AdmissionLimits,
    private readonly options: {
      /** A monotonic clock in ms (performance.now by default). */
      readonly now?: () => number;
      /** How long a request that waited waited, in seconds, as it enters. */
      readonly onWaited?: (seconds: number) => void;
      /** A number in [0, 1) (Math.random by default): spreads the Retry-After of refused requests. */
      readonly random?: () => number;
    } = {},
  ) {
    const now = this.now();
    this.refusals = new RateMeter(now);
    this.completions = new RateMeter(now);
  }

  private now(): number {
    return this.options.now === undefined ? performance.now() : this.options.now();
  }

  /** Bytes of admitted bodies whose requests have not finished. */
  get bytesInFlight(): number {
    return this.inFlight;
  }

  /** Admitted requests that have not finished. */
  get inFlightRequests(): number {
    return this.requestsInFlight;
  }

  /** Requests waiting for admission. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /**
   * Admits a body of `bytes`: undefined when it enters at once (no promise on the common path),
   * a promise that resolves when it does, or a refusal when it would wait past the limits. Every
   * admission that is not refused is paired with one `leave`.
   */
  enter(bytes: number): Promise<void> | AdmissionRefused | undefined {
    const queued = this.queued;
    if (queued === 0 && this.fits(bytes)) {
      this.inFlight += bytes;
      this.requestsInFlight++;
      return undefined;
    }
    const now = this.now();
    const refusal = this.refusal(queued, now);
    if (refusal !== undefined) {
      this.refusals.add();
      this.lastRefusal = now;
      return refusal;
    }
    return new Promise<void>((enter) => this.waiting.push({ bytes, since: now, enter }));
  }

  /** A body of `bytes` may enter now: the budget has room for it (or nothing is in flight) and fewer than maxInFlight requests are. */
  private fits(bytes: number): boolean {
    if (this.requestsInFlight === 0) return true;
    return this.inFlight + bytes <= this.limits.budgetBytes && this.requestsInFlight < (this.limits.maxInFlight ?? Number.POSITIVE_INFINITY);
  }

  private refusal(queued: number, now: number): AdmissionRefused | undefined {
    if (queued >= this.limits.maxWaiting) return WAITING_FULL;
    const maxWaitMs = this.limits.maxWaitMs;
    if (maxWaitMs === 0 || queued === 0) return undefined;
    // The head has waited too long already: the queue drains slower than it fills.
    if (now - (this.waiting[this.head] as Waiting).since > maxWaitMs) return WAIT_TOO_LONG;
    // Every request ahead enters as one in flight finishes: at the rate they finish, this one's
    // turn would come too late. No rate measured yet (nothing finished while others waited): the head's wait decides.
    const drain = this.drain.rate;
    if (drain > 0 && ((queued + 1) * 1_000) / drain > maxWaitMs) return WAIT_TOO_LONG;
    return undefined;
  }

  /** The request of an admitted body has finished (answered or failed): the next ones may enter. */
  leave(bytes: number): void {
    this.inFlight -= bytes;
    this.requestsInFlight--;
    this.completions.add();
    let now: number | undefined;
    if (this.head < this.waiting.length) {
      now = this.now();
      this.drain.finished(now);
    } else this.drain.idle();
    while (this.head < this.waiting.length) {
      const next = this.waiting[this.head] as Waiting;
      if (!this.fits(next.bytes)) break;
      this.head++;
      this.inFlight += next.bytes;
      this.requestsInFlight++;
      if (this.options.onWaited !== undefined) {
        now ??= this.now();
        this.options.onWaited((now - next.since) / 1_000);
      }
      next.enter();
    }
    // The queue is an array read from `head`, so entering costs no shift; the entered part is
    // dropped once it is half of the array.
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * Whole seconds a refused client should wait before it retries: the time the process takes, at
   * the rate requests finish now, to finish those in flight and waiting and as many again as it
   * refused in the last second (which come back too), spread at random over that time and its
   * double so that clients refused together do not return together; within
   * RETRY_AFTER_MIN_S..RETRY_AFTER_MAX_S. The rate is the one measured while requests waited, else
   * that of every request lately; nothing finishing at all: the most.
   */
  retryAfterSeconds(): number {
    const now = this.now();
    const completions = this.completions.perSecond(now);
    const drain = this.drain.rate > 0 ? this.drain.rate : completions;
    if (drain <= 0) return RETRY_AFTER_MAX_S;
    const backlog = this.requestsInFlight + this.queued + this.refusals.perSecond(now);
    const base = backlog / drain;
    const spread = base * (1 + (this.options.random ?? Math.random)());
    return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, Math.ceil(spread)));
  }

  /**
   * True while requests are being refused (one within the last second), or the next one would be:
   * `maxWaiting` requests wait, or the head of the queue has waited past `maxWaitMs`.
   */
  get overloaded(): boolean {
    const now = this.now();
    if (now - this.lastRefusal < 1_000) return true;
    const queued = this.queued;
    if (queued === 0) return false;
    if (queued >= this.limits.maxWaiting) return true;
    const maxWaitMs = this.limits.maxWaitMs;
    return maxWaitMs > 0 && now - (this.waiting[this.head] as Waiting).since > maxWaitMs;
  }
}
