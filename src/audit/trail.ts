import type { Principal } from '../event/account.js';
import type { AuditStore } from '../storage/store.js';
import type { Actor, AuditEntry } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';

/** The operator at the command line. */
export const CLI_OPERATOR: Actor = { kind: 'operator', id: 'operator', label: 'cli' };
/** The operator through the admin API (its bearer token names no person). */
export const ADMIN_API_OPERATOR: Actor = { kind: 'operator', id: 'operator', label: 'admin-api' };
/** Vigil itself (a threat model suspended for its cost, retention). */
export const SYSTEM: Actor = { kind: 'system', id: null, label: 'vigil' };

/** The actor of a request made by this principal. */
export function actorOf(principal: Principal): Actor {
  return principal.kind === 'member'
    ? { kind: 'member', id: principal.userId, label: principal.email }
    : { kind: 'key', id: principal.keyId, label: principal.keyPrefix };
}

/**
 * Field names whose values never enter the trail, whatever the caller passes: secrets, their
 * hashes, one-time codes. A change to one is recorded as `"[changed]"`.
 */
const SECRET_FIELD = /(secret|password|token|hash|totp|recovery|code|^key$)/i;

export type Changes = Record<string, { readonly before: unknown; readonly after: unknown }>;

/**
 * The fields that differ between two versions of a record (compared as JSON), each with its
 * before and after; `fields` limits the comparison. Secret fields show only that they changed.
 */
export function changesBetween(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>> | undefined,
  fields?: readonly string[],
): Changes {
  const names = fields ?? [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const changes: Changes = {};
  for (const name of names) {
    const a = before?.[name];
    const b = after?.[name];
    // Absent and null are the same value: a field created or removed as null did not change.
    if (JSON.stringify(a ?? null) === JSON.stringify(b ?? null)) continue;
    changes[name] = SECRET_FIELD.test(name) ? { before: a === undefined ? null : '[set]', after: '[changed]' } : { before: a ?? null, after: b ?? null };
  }
  return changes;
}

/** Drops secret fields from details before they are stored. */
function withoutSecrets(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(details)) if (!SECRET_FIELD.test(name)) kept[name] = value;
  return kept;
}

/** Where a change came from: the account, who, and the address and user agent of their request. */
export interface AuditOrigin {
  readonly accountId: string;
  readonly actor: Actor;
  readonly ip: string | null;
  readonly userAgent: string | null;
}

export interface AuditChange {
  readonly action: string;
  readonly target?: { readonly kind: string; readonly id: string };
  readonly changes?: Changes;
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * Records changes in the audit trail. An entry is written after the change it describes has
 * been stored; the trail has no way to change or delete an entry (retention aside).
 */
export class AuditTrail {
  constructor(
    private readonly store: Pick<AuditStore, 'append'>,
    private readonly clock: Clock,
  ) {}

  async record(origin: AuditOrigin, change: AuditChange): Promise<AuditEntry> {
    const at = this.clock.now();
    const entry: AuditEntry = {
      id: newId('aud', at),
      accountId: origin.accountId,
      at,
      actor: origin.actor,
      ip: origin.ip,
      userAgent: origin.userAgent === null ? null : origin.userAgent.slice(0, 256),
      action: change.action,
      targetKind: change.target?.kind ?? null,
      targetId: change.target?.id ?? null,
      changes: change.changes ?? {},
      details: withoutSecrets(change.details ?? {}),
    };
    await this.store.append(entry);
    return entry;
  }
}
