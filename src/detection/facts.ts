/**
 * What detectors ask of an event, worked out once: which kind of login it is, its subjects and
 * network signals. Keeps the per-detector code to the decision it makes.
 */
import type { InferredType } from '../catalog/types.js';
import type { EnrichedEvent } from '../pipeline/types.js';

export interface EventFacts {
  readonly event: EnrichedEvent;
  readonly accountId: string;
  readonly type: string;
  /** Event time (ms): every window is judged on it. */
  readonly at: number;
  readonly eventId: string | undefined;
  readonly actor: string | undefined;
  readonly ip: string | undefined;
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
  has(inferred: InferredType): boolean;
}

const LOGIN_SUCCESS_TYPES = new Set(['auth.login.success', 'auth.sso.login']);
const ANONYMISING_FEED = /tor|vpn|proxy|anonym/i;

export function eventFacts(event: EnrichedEvent, accountId: string, eventId: string | undefined): EventFacts {
  const inferred = event.classification.inferred;
  const has = (t: InferredType) => inferred.length > 0 && inferred.includes(t);
  const type = event.type;
  const loginSuccess = LOGIN_SUCCESS_TYPES.has(type) || has('auth.success');
  const loginFailure = type === 'auth.login.failure' || has('auth.failure');
  const threat = event.enrichment.threat;
  const anonymising = threat !== undefined && (threat.torExit || (threat.blocklists.length > 0 && threat.blocklists.some((b) => ANONYMISING_FEED.test(b))));
  return {
    event,
    accountId,
    type,
    at: event.occurredAt,
    eventId,
    actor: event.actorId || undefined,
    ip: event.ip || undefined,
    host: event.host || undefined,
    session: event.sessionId || undefined,
    country: event.enrichment.geo?.country,
    uaFamily: event.enrichment.userAgent?.family || undefined,
    status: event.request?.status,
    loginSuccess,
    loginFailure,
    auth: loginSuccess || loginFailure || type.startsWith('auth.'),
    anonymising,
    has,
  };
}

/** The subject an event-level alert is about: the actor, else the IP, else the host, else the account. */
export function primarySubject(f: EventFacts): string {
  if (f.actor !== undefined) return `actor:${f.actor}`;
  if (f.ip !== undefined) return `ip:${f.ip}`;
  if (f.host !== undefined) return `host:${f.host}`;
  return `account:${f.accountId}`;
}

/** Host-level subject, falling back to the primary subject for host events without a host. */
export const hostSubject = (f: EventFacts): string => (f.host !== undefined ? `host:${f.host}` : primarySubject(f));
