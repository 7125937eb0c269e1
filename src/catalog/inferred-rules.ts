import type { ValidatedEvent } from '../event/types.js';
import type { DetectorFamily, InferredType } from '../event/classification.js';

/** What the rules look at, computed once per event. */
export interface RequestFacts {
  /** Lower-cased path without query string or fragment; '' when absent. */
  readonly path: string;
  readonly status: number | undefined;
  readonly method: string | undefined;
  readonly hasActor: boolean;
  readonly hasEmail: boolean;
  readonly metadataKeys: number;
}

export const META_ROLE = 1;
export const META_MFA = 2;
export const META_VOLUME = 4;

export interface InferredRule {
  readonly type: InferredType;
  readonly trigger: string;
  readonly activates: string;
  readonly families: readonly DetectorFamily[];
  readonly matches: (facts: RequestFacts) => boolean;
}

/** An "auth-related path". */
const AUTH_PATH_PARTS = ['/login', '/signin', '/sign-in', '/auth', '/session', '/token', '/oauth'] as const;
const REGISTER_PATH_PARTS = ['/register', '/signup', '/sign-up'] as const;

const containsAny = (path: string, parts: readonly string[]): boolean => {
  for (const part of parts) if (path.includes(part)) return true;
  return false;
};

export const isAuthPath = (path: string): boolean => containsAny(path, AUTH_PATH_PARTS);
const isLogoutPath = (path: string): boolean => path.includes('/logout') || path.includes('/signout');

/** The inferred-type rules, in order. Matching is case-insensitive on the path without query string. */
export const INFERRED_RULES: readonly InferredRule[] = [
  {
    type: 'auth.failure',
    trigger: 'HTTP 401 or 403 and an auth-related path (/login, /signin, /sign-in, /auth, /session, /token, /oauth)',
    activates: 'Brute-force counting',
    families: ['authentication', 'credential'],
    matches: (f) => (f.status === 401 || f.status === 403) && isAuthPath(f.path),
  },
  {
    type: 'auth.success',
    trigger: 'HTTP 200, auth-related path, actor_id present (a logout path is not a login)',
    activates: 'Impossible travel, geo-anomaly',
    families: ['authentication', 'session'],
    matches: (f) => f.status === 200 && f.hasActor && isAuthPath(f.path) && !isLogoutPath(f.path),
  },
  {
    type: 'auth.logout',
    trigger: 'Path contains /logout or /signout',
    activates: 'Session tracking',
    families: ['session'],
    matches: (f) => isLogoutPath(f.path),
  },
  {
    type: 'data.export',
    trigger: 'Path contains /export or /download, and rows or size in metadata',
    activates: 'Bulk export detection',
    families: ['data'],
    matches: (f) => (f.metadataKeys & META_VOLUME) !== 0 && (f.path.includes('/export') || f.path.includes('/download')),
  },
  {
    type: 'account.create',
    trigger: 'Path contains /register, /signup or /sign-up, and email present',
    activates: 'Disposable email check',
    families: ['account'],
    matches: (f) => f.hasEmail && containsAny(f.path, REGISTER_PATH_PARTS),
  },
  {
    type: 'account.delete',
    trigger: 'HTTP method DELETE and a /users or /accounts path',
    activates: 'Account lifecycle',
    families: ['account'],
    matches: (f) => f.method === 'DELETE' && (f.path.includes('/users') || f.path.includes('/accounts')),
  },
  {
    type: 'role.change',
    trigger: 'Metadata has role, permission or privilege keys',
    activates: 'Session anomaly',
    families: ['privilege', 'session'],
    matches: (f) => (f.metadataKeys & META_ROLE) !== 0,
  },
  {
    type: 'mfa.event',
    trigger: 'Metadata has mfa, 2fa, totp or otp keys',
    activates: 'none stated',
    families: ['credential'],
    matches: (f) => (f.metadataKeys & META_MFA) !== 0,
  },
  {
    type: 'password.event',
    trigger: 'Path contains password or reset, and email present',
    activates: 'Breached-password check',
    families: ['credential'],
    matches: (f) => f.hasEmail && (f.path.includes('password') || f.path.includes('reset')),
  },
  {
    type: 'rate.limited',
    trigger: 'HTTP status 429',
    activates: 'none stated',
    families: ['api'],
    matches: (f) => f.status === 429,
  },
];

// A key matches when one of its words (split on _ - . space and camelCase) is in the list:
// `new_role`, `roleId`, `mfaEnabled`, `otp` match; `controller`, `footprint`, `prole` do not.
const ROLE_WORD = /(?:^|[_\-. ])(?:roles?|permissions?|privileges?)(?:$|[_\-. ])/;
const MFA_WORD = /(?:^|[_\-. ])(?:mfa|2fa|totp|otp)(?:$|[_\-. ])/;
const VOLUME_WORD = /(?:^|[_\-. ])(?:rows?|size|bytes)(?:$|[_\-. ])/;
const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])/g;

function wordFlags(key: string): number {
  const words = key.replace(CAMEL_BOUNDARY, '$1_$2').toLowerCase();
  return (ROLE_WORD.test(words) ? META_ROLE : 0) | (MFA_WORD.test(words) ? META_MFA : 0) | (VOLUME_WORD.test(words) ? META_VOLUME : 0);
}

// Metadata keys repeat from event to event: remember what each one means (bounded).
const KEY_CACHE_LIMIT = 10_000;
const keyCache = new Map<string, number>();

function keyFlags(key: string, value: unknown): number {
  let flags = keyCache.get(key);
  if (flags === undefined) {
    flags = wordFlags(key);
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
    if (key.length <= 64) keyCache.set(key, flags);
  }
  return value === null || value === undefined ? flags & ~META_VOLUME : flags;
}

/** Looks at the top-level metadata keys and at `metadata.extra` (unknown top-level event fields). */
export function metadataFlags(metadata: Readonly<Record<string, unknown>>): number {
  let flags = 0;
  for (const key in metadata) {
    if (!Object.hasOwn(metadata, key)) continue;
    const value = metadata[key];
    flags |= keyFlags(key, value);
    if (key === 'extra' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const extra = value as Record<string, unknown>;
      for (const inner in extra) if (Object.hasOwn(extra, inner)) flags |= keyFlags(inner, extra[inner]);
    }
  }
  return flags;
}

export function normalisePath(path: string | undefined): string {
  if (!path) return '';
  let end = path.length;
  const q = path.indexOf('?');
  if (q >= 0) end = q;
  const h = path.indexOf('#');
  if (h >= 0 && h < end) end = h;
  return (end === path.length ? path : path.slice(0, end)).toLowerCase();
}

export function requestFacts(event: ValidatedEvent): RequestFacts {
  const request = event.request;
  return {
    path: normalisePath(request?.path),
    status: request?.status,
    method: request?.method?.toUpperCase(),
    hasActor: event.actorId !== undefined && event.actorId !== '',
    hasEmail: event.email !== undefined && event.email !== '',
    metadataKeys: metadataFlags(event.metadata),
  };
}

const NONE: readonly InferredType[] = Object.freeze([]);

function hasOwnKey(o: object): boolean {
  for (const key in o) if (Object.hasOwn(o, key)) return true;
  return false;
}

/** The inferred types of an event, in rule order; a shared empty array when none match. */
export function inferTypes(event: ValidatedEvent): readonly InferredType[] {
  // Every rule needs a request or metadata keys.
  if (event.request === undefined && !hasOwnKey(event.metadata)) return NONE;
  const facts = requestFacts(event);
  let found: InferredType[] | undefined;
  for (const rule of INFERRED_RULES) {
    if (rule.matches(facts)) (found ??= []).push(rule.type);
  }
  return found ?? NONE;
}
