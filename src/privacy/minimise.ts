/**
 * Minimisation of one event before detection and storage: the identifiers the account chose to
 * keep less of are replaced (addresses truncated or pseudonymised; actor ids, emails and device
 * ids pseudonymised), the user agent string dropped once enrichment has read it, and metadata
 * scrubbed of secrets. Geo, ASN and the threat feeds have already read the address as sent: the
 * enrich stage runs first.
 */
import { DEVICE_KEYS } from '../detection/metadata.js';
import type { EmailInfo, Enrichment, NetworkInfo } from '../event/enrichment.js';
import type { EnrichedEvent } from '../event/types.js';
import { formatAddress, parseAddress, truncatedAddress } from '../util/ip.js';
import type { CompiledPrivacy } from './minimise-settings.js';
import { pseudonymOf, type AccountSecret, type SubjectKind } from './pseudonym.js';
import { COMMAND_KEYS, SCRUBBED, SECRET_KEY, scrubCommand, scrubText } from './scrub.js';

/** What the minimised event keeps of the values as sent, for the request's own use only. */
export interface SentValues {
  readonly ip?: string;
  readonly actorId?: string;
}

/** How deep and how many metadata values the scrubber visits: metadata is the client's, bounded only by the event's size. */
const MAX_DEPTH = 8;
const MAX_VALUES = 2_048;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The address truncated to its /24 or /48 (canonical text); text that is no address is kept only as a pseudonym or not at all. */
function truncated(ip: string): string | undefined {
  const a = parseAddress(ip);
  return a === undefined ? undefined : formatAddress(truncatedAddress(a));
}

/**
 * A pseudonym, or nothing when the instance has no key: a pseudonym setting saved while a master
 * secret was configured never falls back to storing the value as sent.
 */
const pseudonym = (secret: AccountSecret | undefined, kind: SubjectKind, value: string): string | undefined =>
  secret === undefined ? undefined : pseudonymOf(secret, kind, value);

function minimisedIp(ip: string, privacy: CompiledPrivacy, secret: AccountSecret | undefined): string | undefined {
  switch (privacy.settings.ip) {
    case 'keep':
      return ip;
    case 'truncate':
      return truncated(ip);
    case 'pseudonym':
      return pseudonym(secret, 'ip', ip);
  }
}

class Scrubber {
  visited = 0;
  constructor(
    private readonly privacy: CompiledPrivacy,
    private readonly secret: AccountSecret | undefined,
  ) {}

  private secretKey(key: string, path: string): boolean {
    if (this.privacy.settings.scrub.builtin && SECRET_KEY.test(key)) return true;
    for (const glob of this.privacy.keys) if (glob.test(key) || glob.test(path)) return true;
    return false;
  }

  private text(key: string, value: string): string {
    let out = value;
    if (this.privacy.settings.scrub.builtin) {
      if (COMMAND_KEYS.has(key)) out = scrubCommand(out);
      out = scrubText(out);
    }
    for (const pattern of this.privacy.patterns) if (pattern.test(out)) return SCRUBBED;
    return out;
  }

  /** The value with every secret replaced; the same object when nothing changed. */
  value(key: string, path: string, value: unknown, depth: number): unknown {
    if (++this.visited > MAX_VALUES) return value === null || typeof value !== 'object' ? SCRUBBED : {};
    if (typeof value === 'string') return this.text(key, value);
    if (value === null || typeof value !== 'object') return value;
    if (depth >= MAX_DEPTH) return SCRUBBED;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const next = this.value(key, path, value[i], depth + 1);
        if (next !== value[i]) (out ??= value.slice())[i] = next;
      }
      return out ?? value;
    }
    return this.object(value as Readonly<Record<string, unknown>>, path, depth);
  }

  object(record: Readonly<Record<string, unknown>>, prefix: string, depth: number): Readonly<Record<string, unknown>> {
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(record)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const value = record[key];
      let next: unknown;
      if (
        DEVICE_KEYS.includes(key as (typeof DEVICE_KEYS)[number]) &&
        depth === 0 &&
        typeof value === 'string' &&
        this.privacy.settings.device_id === 'pseudonym'
      )
        next = pseudonym(this.secret, 'device_id', value) ?? SCRUBBED;
      else if (this.secretKey(key, path) && value !== null && value !== undefined && value !== '') next = SCRUBBED;
      else next = this.value(key, path, value, depth + 1);
      if (next !== value) (out ??= { ...record })[key] = next;
    }
    return out ?? record;
  }
}

/** The metadata with secrets scrubbed and device ids pseudonymised; the same object when nothing changed. */
export function minimisedMetadata(
  metadata: Readonly<Record<string, unknown>>,
  privacy: CompiledPrivacy,
  secret: AccountSecret | undefined,
): Readonly<Record<string, unknown>> {
  return new Scrubber(privacy, secret).object(metadata, '', 0);
}

/**
 * Replaces the event's identifiers, in place, by what the account keeps of them, and answers the
 * values as sent that detection still reads for this request alone (allowlists of addresses and
 * actors, and the /24 or /48 a login is counted under). The event is the pipeline's one object
 * (src/event/types.ts): this is the one stage that changes fields an earlier one set.
 */
export function minimiseEvent(event: EnrichedEvent, privacy: CompiledPrivacy, secret: AccountSecret | undefined): void {
  if (!privacy.active) return;
  const s = privacy.settings;
  const e = event as Mutable<EnrichedEvent>;
  const sent: Mutable<SentValues> = {};
  let enrichment: Mutable<Enrichment> | undefined;
  if (e.ip !== undefined && s.ip !== 'keep') {
    sent.ip = e.ip;
    e.ip = minimisedIp(e.ip, privacy, secret);
    const network = e.enrichment.network;
    if (network !== undefined) {
      const ip = minimisedIp(network.ip, privacy, secret);
      enrichment ??= { ...e.enrichment };
      enrichment.network = ip === undefined ? undefined : ({ ...network, ip } satisfies NetworkInfo);
    }
  }
  if (e.actorId !== undefined && s.actor_id === 'pseudonym') {
    sent.actorId = e.actorId;
    e.actorId = pseudonym(secret, 'actor_id', e.actorId);
  }
  if (s.email === 'pseudonym') {
    if (e.email !== undefined) e.email = pseudonym(secret, 'email', e.email);
    const info = e.enrichment.email;
    if (info !== undefined) {
      const normalized = pseudonym(secret, 'email', info.normalized);
      enrichment ??= { ...e.enrichment };
      // The domain stays: disposable-address detection reads it, and a provider's domain is shared by many people.
      enrichment.email = normalized === undefined ? undefined : ({ ...info, normalized } satisfies EmailInfo);
    }
  }
  if (s.user_agent === 'drop' && e.userAgent !== undefined) e.userAgent = undefined;
  if (s.device_id === 'pseudonym' || s.scrub.builtin || privacy.keys.length > 0 || privacy.patterns.length > 0)
    e.metadata = minimisedMetadata(e.metadata, privacy, secret);
  if (enrichment !== undefined) e.enrichment = enrichment;
  if (sent.ip !== undefined || sent.actorId !== undefined) e.sent = sent;
}
