/**
 * The built-in scrubbing rules applied to an event's metadata before it is stored: values of
 * secret-looking keys, payment card numbers (Luhn-checked), bearer tokens, API keys and JSON Web
 * Tokens anywhere in a text, and the secret arguments of command lines. The rules are Vigil's own
 * (fixed patterns, each linear in the text); tenant-configured keys and patterns are compiled
 * through util/tenant-pattern.ts by minimise-settings.ts.
 *
 * The command-line rules are the host agent's (agent/src/redact.ts): the agent is a package of
 * its own, built from its own folder, so it cannot import the service's sources nor the service
 * its; test/privacy/command-parity.test.ts runs the agent's cases through both so they stay one
 * set of rules.
 */

/** What a scrubbed value or part of a value becomes. */
export const SCRUBBED = '***';

/** Key names whose value is a secret wherever they appear in metadata (`password`, `api_key`, `client-secret`, `Authorization`, ...). */
export const SECRET_KEY =
  /pass(?:word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential|authorization|^pwd$|cookie|session[-_]?key/i;

/** Option names that take a secret, as the agent reads them. */
const SECRET_NAME = /pass(?:word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential|authorization/i;

/** Programs that take the password glued to `-p` (`mysql -pS3cret`): `-p` means something else to most others (`mkdir -p`). */
const GLUED_P_PROGRAMS = /(?:^|[\s/;|&(`'"])(?:mysql\w*|mariadb\w*|sshpass)(?=\s)/;

/** Token shapes that are secrets wherever they appear. */
const TOKEN_SHAPES: readonly RegExp[] = [
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|vgl_sk_[A-Za-z0-9_-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})\b/g,
  // JSON Web Tokens: header and payload are base64url JSON objects ("eyJ").
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];

/** `Bearer <token>` / `Basic <credentials>` wherever they appear (a header copied into metadata). */
const AUTH_SCHEME = /\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

/** Runs of 13 to 19 digits, optionally grouped by single spaces or dashes: candidates for a card number. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;

/** The Luhn check of a run of digits (separators skipped). */
export function luhnValid(text: string): boolean {
  let sum = 0;
  let digits = 0;
  let double = false;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) continue;
    digits++;
    let d = c;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits >= 13 && digits <= 19 && sum % 10 === 0;
}

/**
 * A command line with the values of secret-looking arguments replaced by `***`: long options
 * and environment assignments named like a secret, `-p<password>` of the MySQL/MariaDB clients
 * and `sshpass -p`, credentials in URLs, Authorization headers, and well-known token shapes.
 */
export function scrubCommand(command: string): string {
  let out = command;
  out = out.replace(/(^|\s)(--[A-Za-z][\w.-]*)(=|\s+)("[^"]*"|'[^']*'|[^\s"']+)/g, (whole, before: string, flag: string, sep: string, value: string) => {
    const name = flag.replace(/^-+/, '');
    if (!SECRET_NAME.test(name) || value.startsWith('-')) return whole;
    return `${before}${flag}${sep}${SCRUBBED}`;
  });
  out = out.replace(/(\s(?:-u|--user|--proxy-user|-U)\s+)([^\s:]+):(\S+)/g, `$1$2:${SCRUBBED}`);
  out = out.replace(/\b([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s"']+)/g, (whole, name: string) =>
    SECRET_NAME.test(name) || /pwd$/i.test(name) ? `${name}=${SCRUBBED}` : whole,
  );
  if (GLUED_P_PROGRAMS.test(out))
    out = out.replace(/(\s-p)(?!\s|$)("[^"]*"|'[^']*'|\S+)/g, `$1${SCRUBBED}`).replace(/(^|[\s/])(sshpass\s+-p\s+)(\S+)/g, `$1$2${SCRUBBED}`);
  // A scheme starts where no scheme character precedes it: without the look-behind every letter of
  // a long word would start a match that runs to the word's end, quadratic in its length.
  out = out.replace(/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, `$1${SCRUBBED}@`);
  out = out.replace(/(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'"]+/gi, `$1${SCRUBBED}`);
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, SCRUBBED);
  return out;
}

/** Metadata keys that hold command lines: sudo's COMMAND, a process's argv, a crontab's entries (as the agent sends them). */
export const COMMAND_KEYS: ReadonlySet<string> = new Set(['command', 'cmdline', 'command_line']);

/** A text with card numbers, bearer credentials, API keys and JSON Web Tokens replaced by `***`. */
export function scrubText(text: string): string {
  let out = text;
  // Cheap guards first: most texts hold none of these shapes.
  if (/\d{4}/.test(out)) out = out.replace(CARD_CANDIDATE, (run) => (luhnValid(run) ? SCRUBBED : run));
  out = out.replace(AUTH_SCHEME, (_whole, scheme: string) => `${scheme} ${SCRUBBED}`);
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, SCRUBBED);
  return out;
}
