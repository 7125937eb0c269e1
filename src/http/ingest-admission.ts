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
 * the socket once its stream buffer is full. They enter as earlier ones finish: each account's
 * requests in their order, and the accounts with requests waiting in turns, one request each per
 * round, so that one account sending far more than the others does not make theirs wait behind
 * its own. A request alone in flight is always admitted, whatever its size, so no body that the
 * size limits accept waits forever.
 *
 * The requests in flight are bounded too: an admitted request waits for its commit with every
 * other one in flight, so by Little's law its time in the pipeline is their number over the rate
 * the process finishes them; at its capacity, that number sets the latency of accepted requests.
 *
 * The wait is bounded, so that under a sustained load above what the process ingests the
 * requests it accepts keep a bounded latency and the others get a fast answer instead of an
 * ever longer queue: a request that finds `maxWaiting` requests waiting, or its account holding
 * its share of them, or its account's oldest waiting request waiting longer than `maxWaitMs`, or
 * a queue that the observed drain rate would not bring it through within `maxWaitMs` (counting
 * the turns of the other accounts), is refused at once (503 OVERLOADED), with no work done for it.
 * An account's share is the waiting room over one more than the accounts waiting: a share is
 * always free for an account that has nothing waiting yet, so the account that floods an
 * instance is the one refused.
 */

/** Why a request was refused admission: the waiting requests' count, its account's share of them, or the wait it would have. */
export type OverloadReason = 'waiting_full' | 'account_share' | 'wait_too_long';

/** A refused admission: the request is answered 503 at once and never enters the pipeline. */
export interface AdmissionRefused {
  readonly refused: OverloadReason;
}

const WAITING_FULL: AdmissionRefused = { refused: 'waiting_full' };
const ACCOUNT_SHARE: AdmissionRefused = { refused: 'account_share' };
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

/** A first-in first-out queue read from its head, so that taking the head costs no shift. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  get first(): T | undefined {
    return this.items[this.head];
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head++];
    // The taken part is dropped once the queue is empty, or once it is half of the array.
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let k = this.head; k < this.items.length; k++) yield this.items[k] as T;
  }
}

/** One account's part of the admission: its requests in flight and its own queue. */
interface AccountShare {
  readonly account: string;
  inFlight: number;
  readonly waiting: Fifo<Waiting>;
}

export class IngestAdmission {
  private inFlight = 0;
  private requestsInFlight = 0;
  private waitingCount = 0;
  /** The accounts with requests in flight or waiting; an account leaves when it has neither. */
  private readonly shares = new Map<string, AccountShare>();
  /** The accounts with requests waiting, in the order their next request enters: one request per account per round. */
  private readonly turns = new Fifo<AccountShare>();
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
    return this.waitingCount;
  }

  /**
   * Admits a body of `bytes` sent for `account`: undefined when it enters at once (no promise on
   * the common path), a promise that resolves when it does, or a refusal when it would wait past
   * the limits. Every admission that is not refused is paired with one `leave` of the same
   * account.
   */
  enter(bytes: number, account: string): Promise<void> | AdmissionRefused | undefined {
    if (this.waitingCount === 0 && this.fits(bytes)) {
      this.admit(this.shareOf(account), bytes);
      return undefined;
    }
    const now = this.now();
    const share = this.shares.get(account);
    const refusal = this.refusal(share, now);
    if (refusal !== undefined) {
      this.refusals.add();
      this.lastRefusal = now;
      return refusal;
    }
    const waiter = share ?? this.shareOf(account);
    return new Promise<void>((enter) => {
      if (waiter.waiting.size === 0) this.turns.push(waiter);
      waiter.waiting.push({ bytes, since: now, enter });
      this.waitingCount++;
    });
  }

  private shareOf(account: string): AccountShare {
    let share = this.shares.get(account);
    if (share === undefined) {
      share = { account, inFlight: 0, waiting: new Fifo() };
      this.shares.set(account, share);
    }
    return share;
  }

  private admit(share: AccountShare, bytes: number): void {
    this.inFlight += bytes;
    this.requestsInFlight++;
    share.inFlight++;
  }

  /** A body of `bytes` may enter now: the budget has room for it (or nothing is in flight) and fewer than maxInFlight requests are. */
  private fits(bytes: number): boolean {
    if (this.requestsInFlight === 0) return true;
    return this.inFlight + bytes <= this.limits.budgetBytes && this.requestsInFlight < (this.limits.maxInFlight ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Whether a request of the account with `share` (undefined: nothing of it in flight or waiting)
   * may wait for its turn. The accounts take turns, so its turn comes after at most as many
   * requests of each other waiting account as it has waiting itself.
   */
  private refusal(share: AccountShare | undefined, now: number): AdmissionRefused | undefined {
    const queued = this.waitingCount;
    if (queued >= this.limits.maxWaiting) return WAITING_FULL;
    const own = share?.waiting.size ?? 0;
    const accounts = this.turns.size + (own === 0 ? 1 : 0);
    // One share of the waiting room is kept free for an account that has none yet.
    if (own > 0 && own >= Math.floor(this.limits.maxWaiting / (accounts + 1))) return ACCOUNT_SHARE;
    const maxWaitMs = this.limits.maxWaitMs;
    if (maxWaitMs === 0 || queued === 0) return undefined;
    // The account's oldest waiting request has waited too long already: its requests come faster than its turns.
    const head = share?.waiting.first;
    if (head !== undefined && now - head.since > maxWaitMs) return WAIT_TOO_LONG;
    // At the rate requests finish, this one's turn would come too late. No rate measured yet
    // (nothing finished while others waited): the head's wait decides.
    const drain = this.drain.rate;
    const ahead = Math.min(own + (accounts - 1) * (own + 1), queued);
    if (drain > 0 && ((ahead + 1) * 1_000) / drain > maxWaitMs) return WAIT_TOO_LONG;
    return undefined;
  }

  /** A request of `account` whose body was admitted has finished (answered or failed): the next ones may enter. */
  leave(bytes: number, account: string): void {
    this.inFlight -= bytes;
    this.requestsInFlight--;
    this.completions.add();
    const share = this.shares.get(account);
    if (share !== undefined) {
      share.inFlight--;
      this.forgetIfIdle(share);
    }
    let now: number | undefined;
    if (this.waitingCount > 0) {
      now = this.now();
      this.drain.finished(now);
    } else this.drain.idle();
    this.admitWaiting(now);
  }

  /** Lets the waiting requests in, in their turns, while they fit. */
  private admitWaiting(now: number | undefined): void {
    while (this.waitingCount > 0) {
      const next = this.turns.first as AccountShare;
      const request = next.waiting.first as Waiting;
      if (!this.fits(request.bytes)) break;
      this.turns.shift();
      next.waiting.shift();
      this.waitingCount--;
      // The account's next request waits for its next round.
      if (next.waiting.size > 0) this.turns.push(next);
      this.admit(next, request.bytes);
      if (this.options.onWaited !== undefined) {
        now ??= this.now();
        this.options.onWaited((now - request.since) / 1_000);
      }
      request.enter();
    }
  }

  private forgetIfIdle(share: AccountShare): void {
    if (share.inFlight === 0 && share.waiting.size === 0) this.shares.delete(share.account);
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
   * `maxWaiting` requests wait, or a request has waited past `maxWaitMs`.
   */
  get overloaded(): boolean {
    const now = this.now();
    if (now - this.lastRefusal < 1_000) return true;
    const queued = this.queued;
    if (queued === 0) return false;
    if (queued >= this.limits.maxWaiting) return true;
    const maxWaitMs = this.limits.maxWaitMs;
    if (maxWaitMs === 0) return false;
    // Each account's requests wait in their order, so the oldest is one of the accounts' first.
    for (const share of this.turns) if (now - (share.waiting.first as Waiting).since > maxWaitMs) return true;
    return false;
  }
}
