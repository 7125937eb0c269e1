import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import type { AlertRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { deliveryBody } from './formats.js';
import { send, type SendResult } from './send.js';
import { signedHeaders } from './signing.js';
import type { SsrfGuard } from './ssrf.js';
import type { AttemptOutcome, WebhookStore } from '../storage/webhooks/store.js';
import type { WebhookDeliveriesTable } from '../storage/schema.js';
import type { WebhookDelivery, WebhookEndpoint } from '../storage/webhooks/types.js';

/** Retries stop this long after the delivery was created; the delivery is then failed. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 24 * 3_600_000;
export const FIRST_RETRY_MS = 30_000;
export const MAX_RETRY_MS = 3_600_000;
/** Each back-off is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/** The nominal wait after the n-th failed attempt (n from 1): 30 s, 1 min, 2 min, ... capped at 1 h. */
export const backoffMs = (attempt: number): number => Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);

/** `Retry-After` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
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

function describe(result: SendResult): { status: number | null; error: string | null } {
  switch (result.kind) {
    case 'answered': {
      const redirect = result.status >= 300 && result.status < 400 ? ' (redirects are not followed)' : '';
      return {
        status: result.status,
        error: result.status >= 200 && result.status < 300 ? null : `HTTP ${result.status}${redirect}${result.body ? `: ${result.body.slice(0, 200)}` : ''}`,
      };
    }
    case 'network':
      return { status: null, error: result.error };
    case 'refused':
      return { status: null, error: `refused: ${result.reason}` };
  }
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

  /** Claims and attempts the deliveries due now; returns how many it claimed. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.webhooks.claimDue(now, this.leaseMs, this.owner, CLAIM_BATCH);
    await Promise.all(due.map((d) => this.attempt(d)));
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
    const minute = Math.floor(now / 60_000);
    if (this.window.minute !== minute) this.window = { minute, counts: new Map() };
    const used = this.window.counts.get(accountId) ?? 0;
    if (used >= this.deps.config.deliveriesPerMinute) return (minute + 1) * 60_000;
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
    this.sent++;
    const result = await this.post(endpoint, delivery, startedAt);
    const at = clock.now();
    const outcome = this.outcomeOf(delivery, result, at);
    if (!(await webhooks.finishAttempt(delivery, this.owner, outcome))) return;
    // A test says how the endpoint answers now; it does not count toward its health.
    if (delivery.event === 'webhook.test') return;
    const delivered = outcome.status === 'delivered';
    const disabled = await webhooks.recordEndpointOutcome(delivery.accountId, endpoint.id, delivered, at, DISABLE_AFTER_MS, outcome.lastError ?? '');
    if (disabled !== undefined) this.deps.log?.warn({ accountId: delivery.accountId, endpointId: endpoint.id }, disabled);
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
    const headers = signedHeaders(secrets, delivery.id, Math.floor(now / 1000), body);
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
