import type { Redis } from 'ioredis';

/** Deletes every key under `prefix` (SCAN, so a large keyspace is walked in steps). */
export async function deleteKeysWithPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}

/**
 * Every key layout the service writes under its prefix. Detection records and quota counters
 * carry the account id; a rate-limit window belongs to one API key (ids are unique and bound to
 * one account) or one signed-in person (`member:<user id>`) or, for the per-address caps that hold across accounts by design, to an address
 * (`public <ip>` is the window of the routes outside /v1, `dashboard sign-in <ip>` that of the
 * dashboard's sign-in, `sign-in email <digest>` that of one person's sign-in, `sign-in account <id>` that of an account's people); an account's window of threat-model changes carries its account id.
 */
const KEY_LAYOUTS: readonly RegExp[] = [
  /^st:\{acc_[0-9A-Za-z]+\|[^|{}]+\|[^{}]*\}(?::[wdt]:[^:]+|:a)?$/,
  /^quota:\{acc_[0-9A-Za-z]+\}:\d{4}-\d{2}$/,
  /^rl:k:\{key_[0-9A-Za-z]+\}$/,
  /^rl:k:\{member:usr_[0-9A-Za-z]+\}$/,
  /^rl:ip:\{(?:public |dashboard sign-in )?[0-9a-fA-F.:]+\}$/,
  /^rl:ip:\{threat-model changes acc_[0-9A-Za-z]+\}$/,
  /^rl:ip:\{sign-in email [0-9a-f]{32}\}$/,
  /^rl:ip:\{sign-in account acc_[0-9A-Za-z_]+\}$/,
  /^live:\{acc_[0-9A-Za-z]+\}$/,
  /^dryrun:\{acc_[0-9A-Za-z]+\}:[0-9a-f]+:\d+$/,
];
const POISON = /\[object|undefined|null/;

/** The keys under `prefix` that do not follow a known, account-scoped layout. */
export async function unscopedKeys(client: Redis, prefix: string): Promise<string[]> {
  const bad: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      if (POISON.test(rest) || !KEY_LAYOUTS.some((layout) => layout.test(rest))) bad.push(key);
    }
  } while (cursor !== '0');
  return bad;
}
