/** One syslog record, from a log file line or a journal entry. */
export interface SyslogRecord {
  readonly at: number;
  readonly ident: string;
  readonly pid: number | undefined;
  readonly message: string;
}

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
const TRADITIONAL = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\S+) (.*)$/;
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) (\S+) (.*)$/;
const TAG = /^([^\s[:]+)(?:\[(\d+)\])?: ?(.*)$/;
const DAY_MS = 86_400_000;

/**
 * The traditional header ("Nov 26 08:36:53", local time) has no year: the current one,
 * unless that puts the line more than a day in the future (a December line read in January).
 */
function traditionalTime(month: number, day: number, h: number, m: number, s: number, now: number): number {
  const year = new Date(now).getFullYear();
  const at = new Date(year, month, day, h, m, s).getTime();
  return at > now + DAY_MS ? new Date(year - 1, month, day, h, m, s).getTime() : at;
}

/** Parses "<time> <host> <tag>[pid]: message" in the traditional (Debian, RHEL) and RFC 3339 (Ubuntu 24.04+) forms. */
export function parseSyslogLine(text: string, now = Date.now()): SyslogRecord | undefined {
  // A CR left by a CRLF line end is not part of the message.
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  let at: number;
  let rest: string;
  const t = TRADITIONAL.exec(line);
  if (t) {
    const month = MONTHS[t[1] as string];
    if (month === undefined) return undefined;
    at = traditionalTime(month, Number(t[2]), Number(t[3]), Number(t[4]), Number(t[5]), now);
    rest = t[7] as string;
  } else {
    const r = RFC3339.exec(line);
    if (!r) return undefined;
    at = Date.parse(r[1] as string);
    if (Number.isNaN(at)) return undefined;
    rest = r[3] as string;
  }
  const tag = TAG.exec(rest);
  if (!tag) return undefined;
  return { at, ident: tag[1] as string, pid: tag[2] === undefined ? undefined : Number(tag[2]), message: tag[3] as string };
}
