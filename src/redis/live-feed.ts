/**
 * The scale-out live feed: an event ingested on one instance reaches the streams of its account
 * on every instance.
 *
 * - Messages: plain Redis pub/sub, one channel per account, `<prefix>live:{<account id>}`. A Redis
 *   Cluster broadcasts plain PUBLISH to every node, so a subscriber connected to any node hears
 *   it (sharded pub/sub would confine a channel to its slot's node and needs Redis 7 clients on
 *   every node; an account's stream traffic is small next to its ingestion). The instance that
 *   commits delivers to its own streams directly and skips its own messages coming back.
 * - Who listens: an instance publishes an account's messages only while a stream of the account
 *   is open somewhere. Instances holding streams name their accounts on the control channel
 *   `<prefix>live` when a stream opens and every 15 s; the others remember each name for 45 s.
 *   A starting instance asks on that channel, and the holders answer at once.
 * - Slots: at most `maxStreams` open streams per account over all instances, held in a sorted
 *   set `<prefix>live:{<account id>}` (member: the stream, score: when its lease ends; the holder
 *   renews the lease every 15 s, so a crashed instance's streams free their slots within 45 s).
 * - Never in the way of ingestion: a publish is sent without waiting for its answer, at most
 *   `maxInFlight` at a time; past that, or while Redis is away, the message is dropped for the
 *   other instances and counted (`undelivered`). While Redis is away, each instance admits up
 *   to `maxStreams` streams per account on its own.
 */
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { LiveListeners, MAX_STREAMS_PER_ACCOUNT, type LiveFeed, type LiveListener, type LiveMessage, type LiveSubscription } from '../storage/live-feed.js';
import { hashTag } from './script.js';

export interface RedisLiveFeedOptions {
  readonly prefix: string;
  readonly maxStreams?: number;
  /** Publishes awaiting Redis's answer at once; more are dropped. */
  readonly maxInFlight?: number;
}

/** How often a holder renews its streams' leases and names its accounts. */
export const LIVE_RENEW_MS = 15_000;
/** How long a lease, and another instance's naming of an account, lasts. */
const LEASE_MS = 3 * LIVE_RENEW_MS;
const ASK = '?';

interface Envelope {
  /** The publishing instance. */
  readonly o: string;
  readonly m: LiveMessage;
}

export class RedisLiveFeed implements LiveFeed {
  readonly maxStreams: number;
  private readonly listeners: LiveListeners;
  /** This instance's streams: the member of each in its account's slot set. */
  private readonly streams = new Map<LiveListener, { readonly accountId: string; readonly member: string }>();
  /** Accounts whose streams another instance holds, with when that naming lapses (wall time). */
  private readonly elsewhere = new Map<string, number>();
  private readonly sub: Redis | Cluster;
  private readonly control: string;
  private readonly instance = randomBytes(8).toString('hex');
  private readonly maxInFlight: number;
  private inFlight = 0;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly options: RedisLiveFeedOptions,
  ) {
    this.maxStreams = options.maxStreams ?? MAX_STREAMS_PER_ACCOUNT;
    this.maxInFlight = options.maxInFlight ?? 256;
    this.listeners = new LiveListeners(this.maxStreams);
    this.control = `${options.prefix}live`;
    // A subscribed connection takes no other commands: one of its own.
    this.sub = redis.duplicate();
    this.sub.on('error', () => undefined);
    this.sub.on('message', (channel: string, message: string) => this.received(channel, message));
    // Subscribes (again) whenever the connection is (re)established; a first SUBSCRIBE sent
    // before the connection is ready would be refused (no offline queue).
    this.sub.on('ready', () => void this.subscribeAll());
    if (this.sub.status === 'ready') void this.subscribeAll();
    this.timer = setInterval(() => void this.renew(), LIVE_RENEW_MS);
    this.timer.unref();
  }

  get undelivered(): number {
    return this.dropped;
  }

  listening(accountId: string): boolean {
    if (this.listeners.has(accountId)) return true;
    const until = this.elsewhere.get(accountId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.elsewhere.delete(accountId);
    return false;
  }

  publish(accountId: string, message: LiveMessage): void {
    this.listeners.deliver(accountId, message);
    const until = this.elsewhere.get(accountId);
    if (until === undefined || until <= Date.now()) return;
    if (this.inFlight >= this.maxInFlight || this.redis.status !== 'ready') {
      this.dropped++;
      return;
    }
    this.inFlight++;
    this.redis
      .publish(this.channel(accountId), JSON.stringify({ o: this.instance, m: message } satisfies Envelope))
      .catch(() => this.dropped++)
      .finally(() => this.inFlight--);
  }

  async open(accountId: string, listener: LiveListener): Promise<LiveSubscription | undefined> {
    if (this.closed) return undefined;
    const member = `${this.instance}:${randomBytes(6).toString('hex')}`;
    const key = this.channel(accountId);
    const shared = await this.takeSlot(key, member);
    if (shared === false) return undefined;
    // Redis away: this instance admits up to the bound on its own.
    if (!this.listeners.add(accountId, listener)) {
      if (shared) this.releaseSlot(key, member);
      return undefined;
    }
    this.streams.set(listener, { accountId, member });
    if (this.listeners.count(accountId) === 1) await this.sub.subscribe(key).catch(() => undefined);
    this.announce([accountId]);
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        this.streams.delete(listener);
        this.releaseSlot(key, member);
        if (this.listeners.remove(accountId, listener)) void this.sub.unsubscribe(key).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const byKey = new Map<string, string[]>();
    for (const { accountId, member } of this.streams.values()) {
      const key = this.channel(accountId);
      byKey.set(key, [...(byKey.get(key) ?? []), member]);
    }
    if (this.redis.status === 'ready') await Promise.all([...byKey].map(([key, members]) => this.redis.zrem(key, ...members).catch(() => 0)));
    this.streams.clear();
    this.listeners.clear();
    this.sub.disconnect();
  }

  /** The account's channel, which is also the name of its slot set. */
  private channel(accountId: string): string {
    return `${this.options.prefix}live:${hashTag(accountId)}`;
  }

  /** true: a shared slot is held; false: the account's slots are all taken; undefined: Redis could not be asked. */
  private async takeSlot(key: string, member: string): Promise<boolean | undefined> {
    if (this.redis.status !== 'ready') return undefined;
    const now = Date.now();
    try {
      const answers = await this.redis
        .multi()
        .zremrangebyscore(key, '-inf', now)
        .zadd(key, now + LEASE_MS, member)
        .zcard(key)
        .pexpire(key, LEASE_MS)
        .exec();
      const held = answers?.[2]?.[1];
      if (typeof held !== 'number') return undefined;
      if (held <= this.maxStreams) return true;
      this.releaseSlot(key, member);
      return false;
    } catch {
      return undefined;
    }
  }

  private releaseSlot(key: string, member: string): void {
    if (this.redis.status === 'ready') void this.redis.zrem(key, member).catch(() => undefined);
  }

  private announce(accountIds: Iterable<string>): void {
    if (this.redis.status !== 'ready') return;
    for (const accountId of accountIds) void this.redis.publish(this.control, `${this.instance} ${accountId}`).catch(() => undefined);
  }

  private async subscribeAll(): Promise<void> {
    if (this.closed) return;
    try {
      await this.sub.subscribe(this.control, ...[...this.listeners.accounts()].map((id) => this.channel(id)));
      void this.redis.publish(this.control, `${this.instance} ${ASK}`).catch(() => undefined);
    } catch {
      // Subscribed again on the next 'ready'.
    }
  }

  /** Renews this instance's leases and names its accounts to the other instances. */
  private async renew(): Promise<void> {
    if (this.redis.status !== 'ready' || this.streams.size === 0) return;
    const until = Date.now() + LEASE_MS;
    // One command each: a cluster pipelines only the keys of one slot together.
    const renewals: Promise<unknown>[] = [];
    for (const { accountId, member } of this.streams.values()) {
      const key = this.channel(accountId);
      renewals.push(this.redis.zadd(key, until, member), this.redis.pexpire(key, LEASE_MS));
    }
    await Promise.all(renewals).catch(() => undefined);
    this.announce(this.listeners.accounts());
  }

  private received(channel: string, message: string): void {
    if (channel === this.control) {
      // `<instance> <account id>`, or `<instance> ?` from a starting instance.
      const space = message.indexOf(' ');
      if (space === -1 || message.slice(0, space) === this.instance) return;
      const text = message.slice(space + 1);
      if (text === ASK) this.announce(this.listeners.accounts());
      else this.elsewhere.set(text, Date.now() + LEASE_MS);
      return;
    }
    const prefix = `${this.options.prefix}live:{`;
    if (!channel.startsWith(prefix) || !channel.endsWith('}')) return;
    const accountId = channel.slice(prefix.length, -1);
    if (!this.listeners.has(accountId)) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (envelope.o === this.instance) return;
    this.listeners.deliver(accountId, envelope.m);
  }
}
