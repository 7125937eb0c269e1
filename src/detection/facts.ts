/**
 * What detectors ask of an event, worked out once: which kind of login it is, its subjects and
 * network signals. Keeps the per-detector code to the decision it makes.
 */
import type { InferredType } from '../event/classification.js';
import type { EnrichedEvent } from '../event/types.js';

const LOGIN_SUCCESS_TYPES = new Set(['auth.login.success', 'auth.sso.login']);
/** The most attempts one host event may stand for: the agent's cap for a "message repeated N times" line. */
export const MAX_REPEATS = 10_000;
const ANONYMISING_FEED = /tor|vpn|proxy|anonym/i;

export class EventFacts {
  readonly type: string;
  /** Event time (ms): every window is judged on it. */
  readonly at: number;
  readonly actor: string | undefined;
  readonly ip: string | undefined;
  /**
   * `actor:<actor>` and `ip:<ip>`, the subjects of state keys and alerts ('' without an actor or
   * address): made once, so every detector of the event shares one string (and its hash).
   */
  readonly actorSubject: string;
  readonly ipSubject: string;
  readonly host: string | undefined;
  readonly session: string | undefined;
  readonly country: string | undefined;
  readonly uaFamily: string | undefined;
  readonly status: number | undefined;
  readonly loginSuccess: boolean;
  readonly loginFailure: boolean;
  /** An authentication event (auth.* or an inferred auth.success/failure). */
  readonly auth: boolean;
  /** Source on Tor or an anonymising (VPN/proxy) feed: location is meaningless. */
  readonly anonymising: boolean;
  /**
   * How many occurrences a host event stands for: the agent sends one event with `metadata.count`
   * for a syslog "message repeated N times" line. 1 for every other event.
   */
  readonly repeats: number;

  constructor(
    readonly event: EnrichedEvent,
    readonly accountId: string,
    readonly eventId: string | undefined,
  ) {
    const type = event.type;
    this.type = type;
    this.at = event.occurredAt;
    this.actor = event.actorId || undefined;
    this.ip = event.ip || undefined;
    this.actorSubject = this.actor === undefined ? '' : `actor:${this.actor}`;
    this.ipSubject = this.ip === undefined ? '' : `ip:${this.ip}`;
    this.host = event.host || undefined;
    this.session = event.sessionId || undefined;
    this.country = event.enrichment.geo?.country;
    this.uaFamily = event.enrichment.userAgent?.family || undefined;
    this.status = event.request?.status;
    this.loginSuccess = LOGIN_SUCCESS_TYPES.has(type) || this.has('auth.success');
    this.loginFailure = type === 'auth.login.failure' || this.has('auth.failure');
    this.auth = this.loginSuccess || this.loginFailure || type.startsWith('auth.');
    const threat = event.enrichment.threat;
    this.anonymising = threat !== undefined && (threat.torExit || (threat.blocklists.length > 0 && threat.blocklists.some(isAnonymisingFeed)));
    this.repeats = type.startsWith('server.') ? repeatsOf(event.metadata.count) : 1;
  }

  has(inferred: InferredType): boolean {
    const list = this.event.classification.inferred;
    return list.length > 0 && list.includes(inferred);
  }
}

function repeatsOf(count: unknown): number {
  return typeof count === 'number' && Number.isInteger(count) && count > 1 ? Math.min(count, MAX_REPEATS) : 1;
}

function isAnonymisingFeed(name: string): boolean {
  return ANONYMISING_FEED.test(name);
}

export function eventFacts(event: EnrichedEvent, accountId: string, eventId: string | undefined): EventFacts {
  return new EventFacts(event, accountId, eventId);
}

/** The subject an event-level alert is about: the actor, else the IP, else the host, else the account. */
export function primarySubject(f: Pick<EventFacts, 'actor' | 'ip' | 'host' | 'accountId'>): string {
  if (f.actor !== undefined) return `actor:${f.actor}`;
  if (f.ip !== undefined) return `ip:${f.ip}`;
  if (f.host !== undefined) return `host:${f.host}`;
  return `account:${f.accountId}`;
}

/** Host-level subject, falling back to the primary subject for host events without a host. */
export const hostSubject = (f: EventFacts): string => (f.host !== undefined ? `host:${f.host}` : primarySubject(f));
