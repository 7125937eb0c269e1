import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../storage/store.js';
import type { MemberToken } from '../storage/types.js';

/** 32 random bytes, URL-safe: session ids, CSRF tokens and single-use links. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** The store knows a session or a single-use token only by this hash, so a copy of its tables opens nothing. */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Stores a new single-use token and returns it: the only time it exists in the clear. */
export async function issueToken(store: Store, fields: Omit<MemberToken, 'tokenHash' | 'usedAt'>): Promise<string> {
  const token = randomToken();
  await store.members.createToken({ ...fields, tokenHash: hashToken(token), usedAt: null });
  return token;
}

/** The live token of this purpose, or undefined (unknown, used, expired, or of another purpose). */
export async function liveToken(store: Store, token: string, purpose: MemberToken['purpose'], now: number): Promise<MemberToken | undefined> {
  const found = await store.members.findToken(hashToken(token), now);
  return found?.purpose === purpose ? found : undefined;
}

/**
 * The dashboard page a token opens: `accept` (an invitation) or `reset` (a new password). The
 * token travels in the fragment, which browsers send to no server and keep out of Referer.
 */
export const dashboardLink = (publicUrl: string | undefined, page: 'accept' | 'reset', token: string): string =>
  `${publicUrl ?? ''}/dashboard#/${page}/${token}`;
