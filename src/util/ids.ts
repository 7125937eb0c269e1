import { randomFillSync } from 'node:crypto';

const CROCKFORD = Uint8Array.from('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (c) => c.charCodeAt(0));

// Drawn from a pool: one CSPRNG call per 409 ids instead of one per id (an id per request and per event).
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

// An id is made per request and per event: the state and the characters live in fixed buffers,
// so making one allocates only the id string itself.
let lastMs = -1;
const lastRandom = new Uint8Array(10);
const bare = new Uint8Array(26);
/** `pfx_` + the ULID: every prefix has three letters. */
const prefixed = new Uint8Array(30);
prefixed[3] = 0x5f;

function drawRandom(): void {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  lastRandom.set(pool.subarray(poolOffset, poolOffset + 10));
  poolOffset += 10;
}

/** Adds one to the 80-bit random part (monotonic ids within a millisecond). */
function incrementRandom(): void {
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    if (lastRandom[i] !== 255) {
      lastRandom[i] = (lastRandom[i] as number) + 1;
      return;
    }
    lastRandom[i] = 0;
  }
}

/** 48-bit time -> 10 base32 characters, then 80 random bits -> 16, into `text` from `start`. */
function encode(ms: number, text: Uint8Array, start: number): string {
  for (let i = start + 9; i >= start; i--) {
    const mod = ms % 32;
    text[i] = CROCKFORD[mod] as number;
    ms = (ms - mod) / 32;
  }
  let buffer = 0;
  let bits = 0;
  let at = start + 10;
  for (const byte of lastRandom) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text[at++] = CROCKFORD[(buffer >> bits) & 31] as number;
    }
    buffer &= (1 << bits) - 1;
  }
  return String.fromCharCode.apply(null, text as unknown as number[]);
}

/**
 * A ULID: 48-bit time + 80 random bits, lexicographically sortable and monotonic within a
 * process, so ids double as a stable pagination order.
 */
export function ulid(now: number = Date.now()): string {
  advance(now);
  return encode(lastMs, bare, 0);
}

export function newId(
  prefix: 'evt' | 'alr' | 'acc' | 'key' | 'req' | 'whk' | 'whd' | 'not' | 'aud' | 'usr' | 'ses' | 'tok' | 'sjb',
  now: number = Date.now(),
): string {
  advance(now);
  for (let i = 0; i < 3; i++) prefixed[i] = prefix.charCodeAt(i);
  return encode(lastMs, prefixed, 4);
}

function advance(now: number): void {
  if (now <= lastMs) incrementRandom();
  else {
    lastMs = now;
    drawRandom();
  }
}
