import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastMs = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

// Drawn from a pool: one CSPRNG call per 409 ids instead of one per id (an id per request and per event).
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

function randomBits(): Uint8Array {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.slice(poolOffset - 10, poolOffset);
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 9; i >= 0; i--) {
    const mod = ms % 32;
    out = CROCKFORD[mod] + out;
    ms = (ms - mod) / 32;
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 characters
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

function incrementRandom(bytes: Uint8Array): Uint8Array {
  const next = bytes.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] !== 255) {
      next[i] = (next[i] as number) + 1;
      return next;
    }
    next[i] = 0;
  }
  return next;
}

/**
 * A ULID: 48-bit time + 80 random bits, lexicographically sortable and monotonic within a
 * process, so ids double as a stable pagination order.
 */
export function ulid(now: number = Date.now()): string {
  if (now <= lastMs) {
    lastRandom = incrementRandom(lastRandom);
    return encodeTime(lastMs) + encodeRandom(lastRandom);
  }
  lastMs = now;
  lastRandom = randomBits();
  return encodeTime(now) + encodeRandom(lastRandom);
}

export const newId = (prefix: 'evt' | 'alr' | 'acc' | 'key' | 'req', now?: number): string => `${prefix}_${ulid(now)}`;
