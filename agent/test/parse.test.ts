import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/pipeline/validate.js';
import { parseFiles } from '../src/cli.js';
import type { AgentEvent } from '../src/event.js';
import { runCli } from './harness.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const fixture = (p: string) => FIXTURES + p;

function countByType(events: readonly AgentEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.event] = (out[e.event] ?? 0) + 1;
  return out;
}

/** Parse counts per fixture, hand-counted from the files: one event per attempt or action, none for the PAM echoes. */
const EXPECTED: [string, string, Record<string, number>][] = [
  [
    'auth',
    'auth/debian12-auth.log',
    { 'server.ssh.login.failure': 3, 'server.ssh.login.success': 1, 'server.ssh.session.closed': 1, 'server.user.sudo': 1, 'server.user.su': 2 },
  ],
  [
    'auth',
    'auth/ubuntu2404-auth.log',
    { 'server.ssh.login.failure': 4, 'server.ssh.login.success': 1, 'server.user.sudo': 2, 'server.user.created': 1, 'server.user.modified': 1 },
  ],
  [
    'auth',
    'auth/rhel9-secure',
    {
      'server.ssh.login.failure': 3,
      'server.ssh.login.success': 1,
      'server.ssh.session.closed': 1,
      'server.user.sudo': 1,
      'server.user.su': 1,
      'server.user.created': 1,
      'server.user.modified': 1,
      'server.user.deleted': 1,
      'server.group.created': 1,
      'server.group.deleted': 1,
    },
  ],
  [
    'auth',
    'auth/ubuntu1604-auth.log',
    { 'server.ssh.login.failure': 1, 'server.user.sudo': 1, 'server.user.su': 2, 'server.user.created': 1, 'server.group.created': 1 },
  ],
  // CRLF line ends, as logs copied from Windows hosts and some syslog relays have them.
  ['auth', 'auth/crlf-openssh.log', { 'server.ssh.login.failure': 3, 'server.ssh.login.success': 1 }],
  ['journal', 'journal/fedora-journal.json', { 'server.ssh.login.failure': 2, 'server.ssh.login.success': 1, 'server.user.sudo': 1 }],
  ['packages', 'packages/debian12-dpkg.log', { 'server.package.installed': 3 }],
  ['packages', 'packages/rhel9-dnf.rpm.log', { 'server.package.installed': 4 }],
  ['containerd', 'containerd/ctr-events.txt', { 'server.container.started': 1, 'server.container.stopped': 2 }],
];

describe('vigil-agent parse on real-world log formats', () => {
  const table: string[] = [];

  it.each(EXPECTED)('%s %s', (source, file, expected) => {
    const events = parseFiles(source, 'web1', [fixture(file)]).events;
    expect(countByType(events)).toEqual(expected);
    table.push(`${file} (${source}): ${events.length} events ${JSON.stringify(expected)}`);
    // Every event is one the service accepts, with a distinct idempotency key.
    for (const e of events) {
      const verdict = validateEvent(e, { receivedAt: Date.now() });
      expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
      expect(e.host).toBe('web1');
    }
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    if (table.length === EXPECTED.length) console.log('[parse counts]\n' + table.join('\n'));
  });

  it('counts an invalid user once per attempt: "Invalid user" takes the first, its first "Failed ... invalid user" is the same attempt', () => {
    const events = parseFiles('auth', 'web1', [fixture('auth/debian12-auth.log')]).events;
    const oracle = events.filter((e) => e.actor_id === 'oracle');
    expect(oracle.map((e) => e.metadata.reason)).toEqual(['invalid_user', 'invalid_user']);
    expect(oracle.every((e) => e.ip === '198.51.100.23')).toBe(true);
    const root = events.filter((e) => e.event === 'server.ssh.login.failure' && e.actor_id === 'root');
    expect(root).toHaveLength(1);
    expect(root[0]?.metadata).toMatchObject({ method: 'password', port: 40600, reason: 'bad_credentials' });
  });

  it('reads "message repeated 5 times" as one event with count 5 and ignores the PAM summary lines', () => {
    const events = parseFiles('auth', 'web1', [fixture('auth/ubuntu2404-auth.log')]).events;
    const root = events.filter((e) => e.event === 'server.ssh.login.failure' && e.actor_id === 'root');
    expect(root.map((e) => [e.timestamp, e.metadata.count])).toEqual([
      ['2026-01-21T08:00:03.380Z', undefined],
      ['2026-01-21T08:00:16.902Z', 5],
    ]);
    const pubkey = events.find((e) => e.actor_id === 'ubuntu' && e.event === 'server.ssh.login.failure');
    expect(pubkey?.metadata.method).toBe('publickey');
  });

  it('reads sudo commands with their target user and outcome', () => {
    const events = parseFiles('auth', 'web1', [fixture('auth/ubuntu2404-auth.log')]).events.filter((e) => e.event === 'server.user.sudo');
    expect(events.map((e) => [e.actor_id, e.metadata.target_user, e.metadata.success, e.metadata.command])).toEqual([
      ['ubuntu', 'root', true, '/usr/sbin/useradd -m -G sudo svc-backup'],
      ['ubuntu', 'root', false, '/usr/bin/cat /etc/shadow'],
    ]);
    expect(events[1]?.metadata.reason).toBe('3 incorrect password attempts');
  });

  it('reads shadow-utils account changes, once each although useradd, groupadd and groupdel log several lines', () => {
    const events = parseFiles('auth', 'web1', [fixture('auth/rhel9-secure')]).events;
    const pick = (type: string) => events.filter((e) => e.event === type).map((e) => ({ actor: e.actor_id, ...e.metadata }));
    expect(pick('server.user.created')).toEqual([
      expect.objectContaining({ actor: 'deploy', uid: 1001, gid: 1001, home: '/home/deploy', shell: '/bin/bash', tty: '/dev/pts/0' }),
    ]);
    expect(pick('server.user.modified')).toEqual([expect.objectContaining({ actor: 'deploy', change: 'group_added', group: 'wheel', privileged_group: true })]);
    expect(pick('server.group.created')).toEqual([expect.objectContaining({ group: 'devops', gid: 1002 })]);
    expect(pick('server.group.deleted')).toEqual([expect.objectContaining({ group: 'devops' })]);
    expect(pick('server.user.deleted')).toEqual([expect.objectContaining({ actor: 'olduser' })]);
    expect(pick('server.user.su')).toEqual([expect.objectContaining({ actor: 'admin', target_user: 'root', success: true })]);
  });

  it('reads both su formats: util-linux "(to root)" and the older shadow "Successful su for"', () => {
    const deb = parseFiles('auth', 'web1', [fixture('auth/debian12-auth.log')]).events.filter((e) => e.event === 'server.user.su');
    expect(deb.map((e) => [e.actor_id, e.metadata.target_user, e.metadata.success])).toEqual([
      ['alice', 'root', true],
      ['alice', 'root', false],
    ]);
    const old = parseFiles('auth', 'web1', [fixture('auth/ubuntu1604-auth.log')]).events.filter((e) => e.event === 'server.user.su');
    expect(old.map((e) => [e.actor_id, e.metadata.target_user, e.metadata.success])).toEqual([
      ['root', 'root', true],
      ['user3', 'root', false],
    ]);
  });

  it('takes journal timestamps and identifiers (sshd-session of OpenSSH 9.8+) from the entry', () => {
    const events = parseFiles('journal', 'web1', [fixture('journal/fedora-journal.json')]).events;
    expect(events[0]).toMatchObject({ event: 'server.ssh.login.failure', actor_id: 'root', ip: '203.0.113.9', timestamp: '2026-01-22T08:00:00.123Z' });
    expect(events[2]).toMatchObject({ event: 'server.ssh.login.success', actor_id: 'fedora', ip: '192.0.2.71' });
    expect(events[2]?.metadata.program).toBe('sshd-session');
  });

  it('reads dpkg installs and upgrades, and dnf installs and upgrades (not the replaced package)', () => {
    const dpkg = parseFiles('packages', 'web1', [fixture('packages/debian12-dpkg.log')]).events;
    expect(dpkg.map((e) => [e.metadata.action, e.metadata.package, e.metadata.version, e.metadata.previous_version])).toEqual([
      ['install', 'nginx-common', '1.22.1-9+deb12u1', undefined],
      ['install', 'nginx', '1.22.1-9+deb12u1', undefined],
      ['upgrade', 'libc6', '2.36-9+deb12u4', '2.36-9+deb12u3'],
    ]);
    const dnf = parseFiles('packages', 'web1', [fixture('packages/rhel9-dnf.rpm.log')]).events;
    expect(dnf.map((e) => [e.metadata.action, e.metadata.package, e.metadata.arch])).toEqual([
      ['install', 'nginx-filesystem', 'noarch'],
      ['install', 'nginx-core', 'x86_64'],
      ['install', 'nginx', 'x86_64'],
      ['upgrade', 'openssl-libs', 'x86_64'],
    ]);
    expect(dnf[0]?.timestamp).toBe('2026-01-22T09:10:11.000Z');
  });

  it('reads `ctr events` output: task starts and init exits (containerd leaves a zero exit status out), not exec exits', () => {
    const events = parseFiles('containerd', 'web1', [fixture('containerd/ctr-events.txt')]).events;
    expect(events.map((e) => [e.event, e.timestamp, e.metadata.namespace, e.metadata.container_id, e.metadata.exit_code])).toEqual([
      ['server.container.started', '2022-01-21T15:09:49.830Z', 'moby', 'efdc0c13a23e', undefined],
      ['server.container.stopped', '2022-01-21T15:09:50.021Z', 'moby', 'efdc0c13a23e', 0],
      ['server.container.stopped', '2025-04-04T19:10:59.898Z', 'default', 'tc', 137],
    ]);
  });

  it('the command prints exactly those events, one JSON object per line, the same on every run', async () => {
    const file = fixture('auth/ubuntu2404-auth.log');
    const first = await runCli(['parse', '--source', 'auth', '--host', 'web1', file]);
    const second = await runCli(['parse', '--source', 'auth', '--host', 'web1', file]);
    expect(first.code).toBe(0);
    const printed = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AgentEvent);
    expect(printed).toEqual(parseFiles('auth', 'web1', [file]).events);
    expect(second.stdout).toBe(first.stdout);
  });

  it('the command refuses an unknown source with exit code 2', async () => {
    const res = await runCli(['parse', '--source', 'nope', fixture('auth/rhel9-secure')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown source "nope"');
  });

  it('reads a log with CRLF line ends exactly as with LF ends, in the parser and the command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-crlf-'));
    const crlf = join(dir, 'auth.log');
    writeFileSync(crlf, readFileSync(fixture('auth/debian12-auth.log'), 'utf8').replace(/\n/g, '\r\n'));
    const strip = (events: AgentEvent[]) => events.map(({ event, actor_id, ip, timestamp, metadata }) => ({ event, actor_id, ip, timestamp, metadata }));
    const lf = parseFiles('auth', 'web1', [fixture('auth/debian12-auth.log')]).events;
    const read = parseFiles('auth', 'web1', [crlf]);
    expect(lf.length).toBe(8);
    expect(strip(read.events)).toEqual(strip(lf));
    expect(read.unreadable).toBe(0);
    const printed = await runCli(['parse', '--source', 'auth', '--host', 'web1', crlf]);
    expect(printed.stdout.trim().split('\n')).toHaveLength(lf.length);
    expect(printed.stderr).toBe('');
  });

  it('warns on stderr how many lines were not syslog records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-parse-'));
    const file = join(dir, 'mixed.log');
    writeFileSync(file, 'not a syslog line\nJan 20 03:14:07 web1 sshd[1]: Failed password for root from 203.0.113.9 port 22 ssh2\n\nanother one\n');
    const res = await runCli(['parse', '--source', 'auth', '--host', 'web1', file]);
    expect(res.code).toBe(0);
    expect(res.stdout.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toBe('warning: 2 lines are not syslog records and were skipped\n');
  });

  it('takes the source address sshd wrote last: a user name cannot choose it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-spoof-'));
    const file = join(dir, 'auth.log');
    const lines = [
      'Jan 20 03:14:07 web1 sshd[41]: Invalid user x from 10.9.8.7 port 22 from 203.0.113.66 port 50122',
      'Jan 20 03:14:09 web1 sshd[41]: Failed password for invalid user x from 10.9.8.7 port 22 ssh2 from 203.0.113.66 port 50122 ssh2',
      'Jan 20 03:14:12 web1 sshd[42]: Failed password for root from 10.0.0.1 port 1 ssh2: RSA SHA256:x from 203.0.113.66 port 50123 ssh2',
      'Jan 20 03:14:15 web1 sshd[43]: Failed publickey for ubuntu from 203.0.113.66 port 50124 ssh2: ED25519 SHA256:3qWbZg9rJ8mX0vTn',
      'Jan 20 03:14:20 web1 sshd[44]: Accepted password for deploy from 203.0.113.66 port 50125 ssh2',
    ];
    writeFileSync(file, lines.join('\n') + '\n');
    const events = parseFiles('auth', 'web1', [file]).events;
    expect(events.map((e) => [e.event, e.actor_id, e.ip, e.metadata.port])).toEqual([
      ['server.ssh.login.failure', 'x from 10.9.8.7 port 22', '203.0.113.66', 50122],
      ['server.ssh.login.failure', 'root from 10.0.0.1 port 1 ssh2: RSA SHA256:x', '203.0.113.66', 50123],
      ['server.ssh.login.failure', 'ubuntu', '203.0.113.66', 50124],
      ['server.ssh.login.success', 'deploy', '203.0.113.66', 50125],
    ]);
  });

  it('turns one forged "message repeated" line into one event whose count is capped at 10,000', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-repeat-'));
    const file = join(dir, 'auth.log');
    writeFileSync(file, 'Jan 20 03:14:07 web1 sshd[7]: message repeated 2000000 times: [ Failed password for root from 203.0.113.7 port 22 ssh2]\n');
    const events = parseFiles('auth', 'web1', [file]).events;
    expect(events.map((e) => [e.event, e.ip, e.metadata.count])).toEqual([['server.ssh.login.failure', '203.0.113.7', 10_000]]);
  });
});
