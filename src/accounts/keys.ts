import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyKind } from '../event/account.js';

const PREFIX: Record<KeyKind, string> = { secret: 'vgl_sk_', publishable: 'vgl_pk_' };
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = /^vgl_(sk|pk)_[0-9A-Za-z]{32}$/;

/** 32 base62 characters: about 190 bits of randomness (rejection sampling keeps it unbiased). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface GeneratedKey {
  readonly key: string;
  readonly hash: string;
  readonly prefix: string;
}

export function generateKey(kind: KeyKind): GeneratedKey {
  const key = PREFIX[kind] + randomBase62(32);
  return { key, hash: hashKey(key), prefix: key.slice(0, 11) };
}

export const looksLikeKey = (candidate: string): boolean => KEY_SHAPE.test(candidate);

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
