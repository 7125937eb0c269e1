import { createHash } from 'node:crypto';
import { dictionary } from '@zxcvbn-ts/language-common';

/** SHA-1 (lower-case hex) of every password in the zxcvbn common list, hashed once at start. */
export function shippedBreachedHashes(): Set<string> {
  const hashes = new Set<string>();
  for (const password of dictionary.passwords) hashes.add(createHash('sha1').update(password).digest('hex'));
  return hashes;
}
