import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import type { AlertRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../util/duration.js';
import { readHttpDate } from '../util/time-text.js';
import { deliveryBody } from './formats.js';
import { send, type SendResult } from './send.js';
import { signedHeaders } from './signing.js';
import type { SsrfGuard } from './ssrf.js';
import type { AttemptOutcome, WebhookStore } from '../storage/webhooks/store.js';
import type { WebhookDeliveriesTable } from '../storage/schema.js';
import type { WebhookDelivery, WebhookEndpoint } from '../storage/webhooks/types.js';
import { StoreRejectedError } from '../storage/store.js';

/** Retries stop this long after the delivery was created; the delivery is then failed. */
export const RETRY_WINDOW_MS = DAY_MS;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = DAY_MS;
export const FIRST_RETRY_MS = 30 * SECOND_MS;
export const MAX_RETRY_MS = HOUR_MS;
/** Each back-off is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/** The nominal wait after the n-th failed attempt (n from 1): 30 s, 1 min, 2 min, ... capped at 1 h. */
export const backoffMs = (attempt: number): number => Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);

/** `Retry-After` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * SECOND_MS;
  const date = readHttpDate(trimmed);
  return date === undefined ? undefined : Math.max(0, date - now);
}

type Verdict = { readonly kind: 'delivered' } | { readonly kind: 'retry'; readonly waitMs?: number } | { readonly kind: 'fail' };

/** 2xx delivers; network errors, timeouts, 408, 429 and 5xx retry; redirects, other 4xx and refused addresses fail at once. */
export function verdictOf(result: SendResult, now: number): Verdict {
  if (result.kind === 'refused') return { kind: 'fail' };
  if (result.kind === 'network') return { kind: 'retry' };
  const { status } = result;
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', waitMs: retryAfterMs(result.retryAfter, now) };
  return { kind: 'fail' };
}

/** Characters of a receiver's answer quoted in `last_error`. */
const ANSWER_EXCERPT_CHARS = 200;
/** Characters of `last_error` at most (an excerpt, or an error about the connection). */
export const MAX_ERROR_CHARS = 400;
/** `last_error` of an attempt whose words the database refused even after storableText. */
const ERROR_NOT_STORED = 'the attempt failed; its description could not be stored';

// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNSTORABLE = /[\u0000-\u0008\u000b-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The first `max` characters of `text`, never ending in half of a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * Text that came from a receiver or its connection, as it may be stored: C0 control characters
 * other than tab and newline, DEL and unpaired surrogates become U+FFFD (PostgreSQL refuses
 * U+0000 in text; the others garble a listing or a log), and at most `max` characters are kept.
 */
export function storableText(text: string, max: number): string {
  return clip(text, max).replace(UNSTORABLE, '\ufffd');
}

/**
 * What an attempt's result leaves in the delivery: the receiver's status, and the error text. Every
 * word of it that the receiver or its connection chose goes through storableText here, the one
 * place a result becomes stored text (`last_error`, and an endpoint's `disabled_reason`).
 */
function describe(result: SendResult): { status: number | null; error: string | null } {
  let status: number | null = null;
  let error: string;
  switch (result.kind) {
    case 'answered': {
      status = result.status;
      if (status >= 200 && status < 300) return { status, error: null };
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      error = `HTTP ${status}${redirect}${result.body ? `: ${clip(result.body, ANSWER_EXCERPT_CHARS)}` : ''}`;
      break;
    }
    case 'network':
      error = result.error;
      break;
    case 'refused':
      error = `refused: ${result.reason}`;
      break;
  }
  return { status, error: storableText(error, MAX_ERROR_CHARS) };
}

export interface DispatcherDeps {
  readonly webhooks: WebhookStore;
  readonly clock: Clock;
  readonly config: WebhookConfig;
  readonly guard: SsrfGuard;
  readonly log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** [0, 1); Math.random by default. */
  readonly random?: () => number;
}

const CLAIM_BATCH = 20;

/**
 * Delivers the outbox. Each instance polls for due deliveries and leases what it takes (see
 * WebhookStore.claimDue), so instances share the work and none sends a delivery another one
 * holds. Delivery is at least once: a crash after the receiver answered but before the outcome
 * was recorded sends it again when the lease runs out, with the same `webhook-id`.
 */
export class WebhookDispatcher {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Requests this instance has sent (every attempt, whatever its answer). */
  sent = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Attempts per account in the current minute: the per-account delivery rate. */
  private window = { minute: -1, counts: new Map<string, number>() };

  constructor(private readonly deps: DispatcherDeps) {}

  private get leaseMs(): number {
    return this.deps.config.timeoutMs * 2 + 5_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.drain().finally(() => {
        this.running = undefined;
        this.schedule(this.deps.config.pollMs);
      });
    }, ms);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.runOnce()) === CLAIM_BATCH);
    } catch (err) {
      this.deps.log?.warn({ err }, 'webhook dispatch failed; retrying at the next poll');
    }
  }

  /**
   * Claims and attempts the deliveries due now; returns how many it claimed. An attempt whose
   * outcome cannot be recorded is logged and does not hold up the others: the delivery keeps
   * the schedule written before it was sent (see attempt).
   */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.webhooks.claimDue(now, this.leaseMs, this.owner, CLAIM_BATCH);
    await Promise.all(
      due.map((d) =>
        this.attempt(d).catch((err: unknown) => {
          this.deps.log?.warn(
            { err, accountId: d.accountId, deliveryId: d.id },
            'webhook attempt not recorded; the delivery is due again on the schedule held for it',
          );
        }),
      ),
    );
    return due.length;
  }

  /**
   * Inserts a delivery already leased to this dispatcher and attempts it at once (the test
   * endpoint): no poller, of this instance or another, can claim it between the insert and the
   * attempt. Answers the delivery as the attempt left it.
   */
  async deliverNow(row: WebhookDeliveriesTable): Promise<WebhookDelivery | undefined> {
    const leased = { ...row, lease_until: this.deps.clock.now() + this.leaseMs, lease_owner: this.owner };
    await this.deps.webhooks.insertDelivery(leased);
    const delivery = await this.deps.webhooks.getDelivery(row.account_id, row.id);
    if (delivery === undefined) return undefined;
    await this.attempt(delivery);
    return this.deps.webhooks.getDelivery(row.account_id, row.id);
  }

  private overRate(accountId: string, now: number): number | undefined {
    const minute = Math.floor(now / MINUTE_MS);
    if (this.window.minute !== minute) this.window = { minute, counts: new Map() };
    const used = this.window.counts.get(accountId) ?? 0;
    if (used >= this.deps.config.deliveriesPerMinute) return (minute + 1) * MINUTE_MS;
    this.window.counts.set(accountId, used + 1);
    return undefined;
  }

  private async attempt(delivery: WebhookDelivery): Promise<void> {
    const { webhooks, clock } = this.deps;
    const endpoint = await webhooks.getEndpoint(delivery.accountId, delivery.endpointId);
    const startedAt = clock.now();
    if (endpoint === undefined || !endpoint.enabled) {
      const reason =
        endpoint === undefined ? 'the endpoint was deleted' : `the endpoint is disabled${endpoint.disabledReason ? ` (${endpoint.disabledReason})` : ''}`;
      await webhooks.finishAttempt(
        delivery,
        this.owner,
        { status: 'failed', nextAttemptAt: startedAt, lastStatus: null, lastError: reason, at: startedAt },
        false,
      );
      return;
    }
    const waitUntil = this.overRate(delivery.accountId, startedAt);
    if (waitUntil !== undefined) {
      await webhooks.finishAttempt(
        delivery,
        this.owner,
        { status: 'pending', nextAttemptAt: waitUntil, lastStatus: null, lastError: null, at: startedAt },
        false,
      );
      return;
    }
    // Before anything is sent, the delivery is given the schedule of an attempt that fails: if
    // its outcome is then never recorded (the process dies, the database refuses the write or is
    // gone), the next claim comes after the back-off and none comes after the retry window,
    // rather than a new send each time the lease runs out.
    if (!(await webhooks.holdAttempt(delivery, this.owner, this.outcomeOf(delivery, { kind: 'network', error: '' }, startedAt)))) return;
    this.sent++;
    const result = await this.post(endpoint, delivery, startedAt);
    const at = clock.now();
    const outcome = await this.record(delivery, this.outcomeOf(delivery, result, at));
    if (outcome === undefined) return;
    // A test says how the endpoint answers now; it does not count toward its health.
    if (delivery.event === 'webhook.test') return;
    const delivered = outcome.status === 'delivered';
    const disabled = await webhooks.recordEndpointOutcome(delivery.accountId, endpoint.id, delivered, at, DISABLE_AFTER_MS, outcome.lastError ?? '');
    if (disabled !== undefined) this.deps.log?.warn({ accountId: delivery.accountId, endpointId: endpoint.id }, disabled);
  }

  /**
   * Records an attempt's outcome; when the database refuses it for its content, records it again
   * without the description, so that the delivery's schedule moves on all the same. Undefined
   * when this instance no longer holds the lease.
   */
  private async record(delivery: WebhookDelivery, outcome: AttemptOutcome): Promise<AttemptOutcome | undefined> {
    const { webhooks } = this.deps;
    try {
      return (await webhooks.finishAttempt(delivery, this.owner, outcome)) ? outcome : undefined;
    } catch (err) {
      if (!(err instanceof StoreRejectedError)) throw err;
      this.deps.log?.warn({ err, accountId: delivery.accountId, deliveryId: delivery.id }, 'webhook attempt recorded without its description');
      const plain = { ...outcome, lastError: outcome.lastError === null ? null : ERROR_NOT_STORED };
      return (await webhooks.finishAttempt(delivery, this.owner, plain)) ? plain : undefined;
    }
  }

  private post(endpoint: WebhookEndpoint, delivery: WebhookDelivery, now: number): Promise<SendResult> {
    const body = deliveryBody(endpoint.format, {
      id: delivery.id,
      accountId: delivery.accountId,
      event: delivery.event,
      createdAt: delivery.createdAt,
      alert: delivery.alert as unknown as AlertRow,
    });
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret !== null && (endpoint.previousSecretUntil ?? 0) > now) secrets.push(endpoint.previousSecret);
    const headers = signedHeaders(secrets, delivery.id, Math.floor(now / SECOND_MS), body);
    return send(new URL(endpoint.url), headers, body, this.deps.config.timeoutMs, this.deps.guard);
  }

  private outcomeOf(delivery: WebhookDelivery, result: SendResult, at: number): AttemptOutcome {
    const verdict = verdictOf(result, at);
    const { status: lastStatus, error: lastError } = describe(result);
    if (verdict.kind === 'delivered') return { status: 'delivered', nextAttemptAt: at, lastStatus, lastError, at };
    const deadline = delivery.createdAt + RETRY_WINDOW_MS;
    // A test delivery is tried once: its answer is the result the caller asked for.
    if (verdict.kind === 'fail' || at >= deadline || delivery.event === 'webhook.test')
      return { status: 'failed', nextAttemptAt: at, lastStatus, lastError, at };
    const random = this.deps.random ?? Math.random;
    const wait = verdict.waitMs ?? Math.round(backoffMs(delivery.attempts + 1) * (1 - JITTER + 2 * JITTER * random()));
    return { status: 'pending', nextAttemptAt: Math.min(at + wait, deadline), lastStatus, lastError, at };
  }
}
