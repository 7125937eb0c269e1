import type { AgentEvent } from './event.js';

/** How command lines are scrubbed before an event is buffered (config `redact`). */
export interface RedactConfig {
  /** Replace secret-looking arguments of command lines with `***` (default true). */
  readonly command_secrets: boolean;
  /** More option names whose value is a secret, e.g. `--vault-pass` (matched as `--name=value` and `--name value`). */
  readonly extra_flags: readonly string[];
}

export const REDACTED = '***';

/** The metadata fields that hold command lines: sudo's COMMAND, a process's argv, a crontab's new entries. */
const COMMAND_FIELDS = ['command'] as const;

/** Option names that take a secret, long (`--password=x`, `--password x`) or as an environment assignment (`DB_PASSWORD=x`). */
const SECRET_NAME = /pass(?:word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential|authorization/i;

/** Programs that take the password glued to `-p` (`mysql -pS3cret`): `-p` means something else to most others (`mkdir -p`). */
const GLUED_P_PROGRAMS = /(?:^|[\s/;|&(`'"])(?:mysql\w*|mariadb\w*|sshpass)(?=\s)/;

/** Token shapes that are secrets wherever they appear. */
const TOKEN_SHAPES: readonly RegExp[] = [
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|vgl_sk_[A-Za-z0-9_-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})\b/g,
  // JSON Web Tokens: header and payload are base64url JSON objects ("eyJ").
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];

/**
 * A command line with the values of secret-looking arguments replaced by `***`: long options
 * and environment assignments named like a secret, `-p<password>` of the MySQL/MariaDB clients
 * and `sshpass -p`, credentials in URLs, Authorization headers, and well-known token shapes. The
 * rest of the line stays, so the service still classifies it (a reverse shell stays one).
 */
export function redactCommand(command: string, extraFlags: readonly string[] = []): string {
  let out = command;
  // --password=value, --db-password value, --token 'value'
  out = out.replace(/(^|\s)(--[A-Za-z][\w.-]*)(=|\s+)("[^"]*"|'[^']*'|[^\s"']+)/g, (whole, before: string, flag: string, sep: string, value: string) => {
    const name = flag.replace(/^-+/, '');
    const secret = SECRET_NAME.test(name) || extraFlags.some((f) => f.replace(/^-+/, '') === name);
    if (!secret || value.startsWith('-')) return whole;
    return `${before}${flag}${sep}${REDACTED}`;
  });
  // curl -u user:password, --proxy-user user:password
  out = out.replace(/(\s(?:-u|--user|--proxy-user|-U)\s+)([^\s:]+):(\S+)/g, `$1$2:${REDACTED}`);
  // DB_PASSWORD=value, MYSQL_PWD=value
  out = out.replace(/\b([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s"']+)/g, (whole, name: string) =>
    SECRET_NAME.test(name) || /pwd$/i.test(name) ? `${name}=${REDACTED}` : whole,
  );
  if (GLUED_P_PROGRAMS.test(out))
    out = out.replace(/(\s-p)(?!\s|$)("[^"]*"|'[^']*'|\S+)/g, `$1${REDACTED}`).replace(/(^|[\s/])(sshpass\s+-p\s+)(\S+)/g, `$1$2${REDACTED}`);
  // scheme://user:password@host
  out = out.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, `$1${REDACTED}@`);
  // Authorization: Bearer x / Basic x
  out = out.replace(/(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'"]+/gi, `$1${REDACTED}`);
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, REDACTED);
  return out;
}

/** The event with its command lines scrubbed (the same object when nothing changed). */
export function redactEvent(event: AgentEvent, config: RedactConfig): AgentEvent {
  if (!config.command_secrets) return event;
  let metadata: Record<string, unknown> | undefined;
  for (const field of COMMAND_FIELDS) {
    const value = event.metadata[field];
    if (typeof value !== 'string') continue;
    const scrubbed = redactCommand(value, config.extra_flags);
    if (scrubbed !== value) (metadata ??= { ...event.metadata })[field] = scrubbed;
  }
  return metadata === undefined ? event : { ...event, metadata };
}
