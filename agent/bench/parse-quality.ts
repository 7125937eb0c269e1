/**
 * Parse recall and precision of the auth source on a labelled public sshd log: loghub's
 * OpenSSH_2k (https://github.com/logpai/loghub, free for research; not shipped with Vigil, so
 * its two files are passed in). The truth comes from loghub's own template of each line
 * (`*_structured.csv`), not from the agent's patterns:
 *   - every "Failed password for …" line is one failed attempt ("message repeated N times" around
 *     it, N attempts); "Failed none" asks which methods exist and is no attempt;
 *   - an "Invalid user" line is the same attempt as the first "Failed password for invalid user"
 *     of its connection (same pid), and an attempt of its own when none follows;
 *   - "Accepted …" is one success.
 * Events are compared as a multiset of (type, user, address), weighted by `metadata.count`.
 *
 *   npx tsx agent/bench/parse-quality.ts OpenSSH_2k.log OpenSSH_2k.log_structured.csv
 */
import { readFileSync } from 'node:fs';
import { parseFiles } from '../src/cli.js';

const [logPath, csvPath] = process.argv.slice(2);
if (logPath === undefined || csvPath === undefined) {
  console.error('usage: parse-quality.ts LOG STRUCTURED_CSV');
  process.exit(2);
}

interface Row {
  readonly pid: string;
  readonly content: string;
  readonly template: string;
}

/** loghub's structured CSV: LineId,Date,Day,Time,Component,Pid,Content,EventId,EventTemplate (no field of OpenSSH_2k is quoted). */
function rows(text: string): Row[] {
  return text
    .split(/\r?\n/)
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => {
      const f = line.split(',');
      // Content may hold commas: it spans from field 6 to the last two.
      return { pid: f[5] ?? '', content: f.slice(6, -2).join(','), template: f.at(-1) ?? '' };
    });
}

/** The words between " for " / "user " and " from ", and the address after " from ", by position in loghub's template. */
function userAndAddress(content: string, prefix: string): [string, string] {
  const rest = content.slice(prefix.length);
  const from = rest.lastIndexOf(' from ');
  const user = rest.slice(0, from);
  const address = rest.slice(from + ' from '.length).split(' ')[0] ?? '';
  return [user, address];
}

const truth = new Map<string, number>();
const expect = (key: string, n: number) => truth.set(key, (truth.get(key) ?? 0) + n);
const pendingInvalid = new Map<string, string>();
for (const row of rows(readFileSync(csvPath, 'utf8'))) {
  let content = row.content;
  let n = 1;
  if (row.template.startsWith('message repeated')) {
    n = Number(content.split(' ')[2]);
    content = content.slice(content.indexOf('[') + 1, content.lastIndexOf(']')).trim();
  }
  if (content.startsWith('Failed password for invalid user ')) {
    const [user, ip] = userAndAddress(content, 'Failed password for invalid user ');
    // The "Invalid user" line of this connection stood for this attempt already.
    if (pendingInvalid.delete(row.pid)) n -= 1;
    expect(`server.ssh.login.failure ${user} ${ip}`, n);
  } else if (content.startsWith('Failed password for ')) {
    const [user, ip] = userAndAddress(content, 'Failed password for ');
    expect(`server.ssh.login.failure ${user} ${ip}`, n);
  } else if (row.template === 'Invalid user <*> from <*>') {
    const [user, ip] = userAndAddress(content, 'Invalid user ');
    pendingInvalid.set(row.pid, `${user} ${ip}`);
    expect(`server.ssh.login.failure ${user} ${ip}`, 1);
  } else if (content.startsWith('Accepted ')) {
    const method = content.split(' ')[1] ?? '';
    const [user, ip] = userAndAddress(content, `Accepted ${method} for `);
    expect(`server.ssh.login.success ${user} ${ip}`, 1);
  }
}

const { events, unreadable } = parseFiles('auth', 'bench', [logPath]);
const found = new Map<string, number>();
for (const e of events) {
  const key = `${e.event} ${e.actor_id ?? ''} ${e.ip ?? ''}`;
  const count = typeof e.metadata.count === 'number' ? e.metadata.count : 1;
  found.set(key, (found.get(key) ?? 0) + count);
}

let matched = 0;
let expected = 0;
let reported = 0;
for (const [key, n] of truth) {
  expected += n;
  matched += Math.min(n, found.get(key) ?? 0);
}
for (const n of found.values()) reported += n;
const lines = readFileSync(logPath, 'utf8').split('\n').length;
console.log(`lines: ${lines}, not syslog records: ${unreadable}, events: ${events.length}`);
console.log(`attempts expected: ${expected}, reported: ${reported}, matched: ${matched}`);
console.log(`recall: ${((100 * matched) / expected).toFixed(2)}%, precision: ${((100 * matched) / reported).toFixed(2)}%`);
