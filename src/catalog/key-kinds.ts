import type { KeyKind } from '../event/account.js';

/**
 * The event families (first segment of the type) a publishable key may send. A publishable key
 * is public: any visitor reads it from the page, so an event it carries is only as trustworthy
 * as a browser. It may report what a browser itself takes part in: the authentication steps a
 * login page sees (`auth.*`) and the page's own events as custom types (`custom.*`, what the
 * browser client's examples send). Host agent events (`server.*`), administrative actions
 * (`admin.*`) and every other family are asserted by a trusted server, with a secret key.
 */
export const PUBLISHABLE_KEY_EVENT_FAMILIES: readonly string[] = Object.freeze(['auth', 'custom']);

const PUBLISHABLE_PREFIXES: readonly string[] = PUBLISHABLE_KEY_EVENT_FAMILIES.map((family) => `${family}.`);

/** Whether a key of this kind may send an event of this (well-formed) type. */
export function keyMaySend(kind: KeyKind, type: string): boolean {
  if (kind === 'secret') return true;
  for (const prefix of PUBLISHABLE_PREFIXES) if (type.startsWith(prefix)) return true;
  return false;
}

/** The allowed families as a message names them: "auth.* and custom.*". */
export function publishableFamiliesText(): string {
  const names = PUBLISHABLE_KEY_EVENT_FAMILIES.map((family) => `${family}.*`);
  return names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}
