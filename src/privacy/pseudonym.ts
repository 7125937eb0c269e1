/**
 * Keyed pseudonyms of personal identifiers. The same account, kind and value always give the same
 * text, so detection and erasure can match on a pseudonym without the raw value; without the
 * operator's master secret nobody (the account's users included) can test a guess against one.
 *
 * Keys: the master secret (VIGIL_PSEUDONYM_SECRET) keys HMAC-SHA256 over the account id to give
 * each account its own key, so two accounts' pseudonyms of one value differ and cannot be joined.
 */
import { createHmac } from 'node:crypto';
import { formatAddress, parseAddress } from '../util/ip.js';

/** The identifier kinds of a data subject, named as the event fields they come from. */
export const SUBJECT_KINDS = ['actor_id', 'email', 'ip', 'device_id'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/** Every pseudonym starts with this: the version of the derivation, so a pseudonym is recognisable. */
export const PSEUDONYM_PREFIX = 'p1:';

/** Characters of a pseudonym: the prefix and base64url of 16 bytes. */
export const PSEUDONYM_LENGTH = PSEUDONYM_PREFIX.length + 22;

/** Shortest master secret accepted: 32 characters carry at least 128 bits from any reasonable generator. */
export const MASTER_SECRET_MIN_LENGTH = 32;

/** One account's pseudonym key. Opaque: the key bytes stay in this module (not in JSON, logs or inspection). */
export interface AccountSecret {
  readonly accountId: string;
}

const KEYS = new WeakMap<AccountSecret, Buffer>();

function derive(master: string, accountId: string): AccountSecret {
  const secret: AccountSecret = Object.freeze({ accountId });
  KEYS.set(secret, createHmac('sha256', master).update(`vigil pseudonym account\0${accountId}`).digest());
  return secret;
}

/** The account's key from the master secret. */
export function accountSecret(master: string, accountId: string): AccountSecret {
  return derive(master, accountId);
}

/**
 * The form of a value a pseudonym is computed over: addresses in canonical text (so `::ffff:1.2.3.4`
 * and `1.2.3.4` agree), emails lower-cased and trimmed, other identifiers as sent.
 */
export function normalisedIdentifier(kind: SubjectKind, value: string): string {
  if (kind === 'ip') {
    const address = parseAddress(value.trim());
    return address === undefined ? value : formatAddress(address);
  }
  if (kind === 'email') return value.trim().toLowerCase();
  return value;
}

/** Keyed pseudonym of an identifier: same account + kind + value -> same text. */
export function pseudonymOf(secret: AccountSecret, kind: SubjectKind, value: string): string {
  const key = KEYS.get(secret);
  if (key === undefined) throw new TypeError('pseudonymOf takes a secret made by accountSecret or PseudonymKeys');
  const mac = createHmac('sha256', key)
    .update(`${kind}\0${normalisedIdentifier(kind, value)}`)
    .digest();
  return PSEUDONYM_PREFIX + mac.subarray(0, 16).toString('base64url');
}

const SHAPE = /^p1:[A-Za-z0-9_-]{22}$/;

/** Whether text has the shape of a pseudonym (it may still be a value a sender chose to look like one). */
export function isPseudonym(text: string): boolean {
  return text.length === PSEUDONYM_LENGTH && SHAPE.test(text);
}

/**
 * The instance's pseudonym keys: the master secret from the configuration, or none. Without one,
 * no pseudonym can be made and the setting that needs them is refused.
 */
export class PseudonymKeys {
  readonly #master: string | undefined;
  readonly #accounts = new Map<string, AccountSecret>();

  constructor(master: string | undefined) {
    this.#master = master;
  }

  get available(): boolean {
    return this.#master !== undefined;
  }

  /** The account's key, or undefined when the instance has no master secret. */
  forAccount(accountId: string): AccountSecret | undefined {
    if (this.#master === undefined) return undefined;
    let secret = this.#accounts.get(accountId);
    if (secret === undefined) {
      // Bounded by the number of accounts the process serves; a derivation is one HMAC.
      secret = derive(this.#master, accountId);
      this.#accounts.set(accountId, secret);
    }
    return secret;
  }

  toJSON(): { available: boolean } {
    return { available: this.available };
  }
}
