import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/process/service.js';
import { EventBuffer } from '../src/buffer.js';
import { DEFAULTS, type AgentConfig } from '../src/config.js';
import type { AgentEvent } from '../src/event.js';
import { createLogger } from '../src/log.js';
import { chooseSources } from '../src/agent.js';
import { containerdSource } from '../src/sources/containerd.js';
import { containersSource } from '../src/sources/containers.js';
import { filesSource, isCronPath } from '../src/sources/files.js';
import { parseIptablesSave, parseNftRuleset } from '../src/sources/firewall.js';
import { heartbeatSource } from '../src/sources/heartbeat.js';
import { journalSource } from '../src/sources/journal.js';
import { logIntegritySource } from '../src/sources/log-integrity.js';
import { modulesSource } from '../src/sources/modules.js';
import { parseProcNet, portsSource } from '../src/sources/ports.js';
import { processesSource } from '../src/sources/processes.js';
import type { Source, SourceContext } from '../src/sources/source.js';
import { fakeCtr, until } from './harness.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const running: Source[] = [];

afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

/** A source context over a fresh buffer, with `sources` settings merged over the defaults. */
function context(sources: Record<string, object>, heartbeat = DEFAULTS.heartbeat): SourceContext & { events(): AgentEvent[] } {
  const dir = tempDir('vigil-agent-src-');
  const merged = { ...DEFAULTS.sources } as Record<string, object>;
  for (const [k, v] of Object.entries(sources)) merged[k] = { ...(merged[k] as object), ...v };
  const config = { ...DEFAULTS, host: 'h1', heartbeat, sources: merged } as unknown as AgentConfig;
  const buffer = new EventBuffer(join(dir, 'buffer.db'), 1000);
  return { config, host: 'h1', buffer, log: createLogger('error'), events: () => buffer.pending(10_000).map((r) => JSON.parse(r.body) as AgentEvent) };
}

async function started(source: Source): Promise<Source> {
  running.push(source);
  await source.start();
  return source;
}

const types = (events: readonly AgentEvent[]) => events.map((e) => e.event);

describe('file integrity', () => {
  it('reports created, modified (old and new hash), permission changed and deleted, after a silent baseline', async () => {
    const dir = tempDir('vigil-agent-fim-');
    mkdirSync(join(dir, 'sudoers.d'));
    writeFileSync(join(dir, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    const ctx = context({
      files: { enabled: true, interval_s: 0.05, paths: [join(dir, 'passwd'), join(dir, 'sudoers.d'), join(dir, '*', 'authorized_keys')] },
    });
    await started(filesSource(ctx));
    await until('the baseline', 5_000, async () => (ctx.buffer.getState('files:snapshot') ? true : undefined), 20);
    expect(ctx.events()).toEqual([]);

    writeFileSync(join(dir, 'sudoers.d', 'backdoor'), 'eve ALL=(ALL) NOPASSWD:ALL\n');
    const before = readFileSync(join(dir, 'passwd'));
    appendFileSync(join(dir, 'passwd'), 'eve:x:0:0::/root:/bin/bash\n');
    mkdirSync(join(dir, 'eve'));
    writeFileSync(join(dir, 'eve', 'authorized_keys'), 'ssh-ed25519 AAAA eve\n');
    const events = await until('three changes', 5_000, async () => (ctx.events().length >= 3 ? ctx.events() : undefined), 20);
    const byPath = Object.fromEntries(events.map((e) => [e.metadata.path, e]));
    expect(byPath[join(dir, 'sudoers.d', 'backdoor')]?.event).toBe('server.file.created');
    expect(byPath[join(dir, 'eve', 'authorized_keys')]?.event).toBe('server.file.created');
    const modified = byPath[join(dir, 'passwd')];
    expect(modified?.event).toBe('server.file.modified');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(modified?.metadata.old_sha256).toBe(sha(before));
    expect(modified?.metadata.new_sha256).toBe(sha(readFileSync(join(dir, 'passwd'))));

    chmodSync(join(dir, 'passwd'), 0o666);
    rmSync(join(dir, 'sudoers.d', 'backdoor'));
    const more = await until('two more', 5_000, async () => (ctx.events().length >= 5 ? ctx.events().slice(3) : undefined), 20);
    expect(types(more).sort()).toEqual(['server.file.deleted', 'server.file.permission_changed']);
    expect(more.find((e) => e.event === 'server.file.permission_changed')?.metadata).toMatchObject({ mode: '0666' });
  });

  it('names crontab paths as cron events', () => {
    expect(isCronPath('/etc/crontab')).toBe(true);
    expect(isCronPath('/etc/cron.d/backup')).toBe(true);
    expect(isCronPath('/var/spool/cron/crontabs/root')).toBe(true);
    expect(isCronPath('/etc/passwd')).toBe(false);
  });
});

describe('log clearing and tampering', () => {
  it('a truncated log is cleared, a shrunk one tampered with; rotation by rename or copytruncate is neither', async () => {
    const dir = tempDir('vigil-agent-integrity-');
    const log = join(dir, 'auth.log');
    writeFileSync(log, 'Jan 20 03:14:07 h sshd[1]: line one\nJan 20 03:14:08 h sshd[1]: line two\n');
    const ctx = context({ log_integrity: { enabled: true, interval_s: 0.05, paths: [log] } });
    await started(logIntegritySource(ctx));
    const look = async () => {
      const n = ctx.buffer.getState<{ size: number }>(`integrity:${log}`);
      await new Promise((r) => setTimeout(r, 200));
      return n;
    };
    await until('the baseline', 5_000, async () => ctx.buffer.getState(`integrity:${log}`), 20);

    renameSync(log, `${log}.1`);
    writeFileSync(log, 'Jan 20 03:15:00 h sshd[2]: after rotation\n');
    await look();
    copyFileSync(log, `${log}.2`);
    rmSync(`${log}.1`);
    renameSync(`${log}.2`, `${log}.1`);
    truncateSync(log, 0);
    await look();
    expect(ctx.events()).toEqual([]);

    appendFileSync(log, 'Jan 20 03:16:00 h sshd[3]: one\nJan 20 03:16:01 h sshd[3]: two\n');
    await look();
    truncateSync(log, 0);
    const cleared = await until('cleared', 5_000, async () => ctx.events()[0]);
    expect(cleared).toMatchObject({ event: 'server.log.cleared', host: 'h1', metadata: { path: log, reason: 'truncated', size: 0 } });

    appendFileSync(log, 'Jan 20 03:17:00 h sshd[4]: one\nJan 20 03:17:01 h sshd[4]: two\n');
    await look();
    truncateSync(log, 20);
    const tampered = await until('tampered', 5_000, async () => ctx.events()[1]);
    expect(tampered).toMatchObject({ event: 'server.log.tampered', metadata: { path: log, reason: 'shrank', size: 20 } });

    rmSync(log);
    const deleted = await until('deleted', 5_000, async () => ctx.events()[2]);
    expect(deleted).toMatchObject({ event: 'server.log.cleared', metadata: { reason: 'deleted' } });
  });

  it('reports login records zeroed in wtmp (size and inode unchanged), not a login appended', async () => {
    const dir = tempDir('vigil-agent-wtmp-');
    const wtmp = join(dir, 'wtmp');
    copyFileSync(`${FIXTURES}wtmp/wtmp`, wtmp);
    const record = readFileSync(wtmp).subarray(6 * 384, 7 * 384);
    const ctx = context({ log_integrity: { enabled: true, interval_s: 0.05, paths: [wtmp] } });
    await started(logIntegritySource(ctx));
    await until('the baseline', 5_000, async () => (ctx.buffer.getState(`integrity-zeroed:${wtmp}`) === 0 ? true : undefined), 20);

    appendFileSync(wtmp, record);
    await until('the login seen', 5_000, async () => (ctx.buffer.getState<{ size: number }>(`integrity:${wtmp}`)?.size === 8 * 384 ? true : undefined), 20);
    expect(ctx.events()).toEqual([]);

    // Wipe root's session (login and logout records) in place, as log wipers do.
    const fd = openSync(wtmp, 'r+');
    writeSync(fd, Buffer.alloc(2 * 384), 0, 2 * 384, 4 * 384);
    closeSync(fd);
    const tampered = await until('the gap', 5_000, async () => ctx.events()[0]);
    expect(tampered).toMatchObject({
      event: 'server.log.tampered',
      metadata: { path: wtmp, reason: 'records_zeroed', zeroed_records: 2, gap_after: '2026-01-20T03:12:05.000Z', gap_before: '2026-01-20T04:01:09.000Z' },
    });
  });
});

describe('listening ports', () => {
  it('parses /proc/net/tcp and tcp6 listeners', () => {
    const tcp = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21412 1 0000000000000000 100 0 0 10 0
   1: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   113        0 23151 1 0000000000000000 100 0 0 10 0
   2: 0F02000A:0016 0A00000A:D431 01 00000000:00000000 02:0009B6E1 00000000     0        0 51511 4 0000000000000000 20 4 29 10 -1`;
    expect(Object.keys(parseProcNet(tcp, 'tcp'))).toEqual(['tcp:0.0.0.0:22', 'tcp:127.0.0.1:3306']);
    const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21423 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 88811 1 0000000000000000 100 0 0 10 0`;
    expect(Object.keys(parseProcNet(tcp6, 'tcp6'))).toEqual(['tcp6:[::]:22', 'tcp6:[::1]:8080']);
  });

  it('reports a port that starts listening on this host', async () => {
    const ctx = context({ ports: { enabled: true, interval_s: 0.05 } });
    await started(portsSource(ctx));
    await until('the baseline', 5_000, async () => ctx.buffer.getState('ports:snapshot'), 20);
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const event = await until('the listener', 5_000, async () => ctx.events().find((e) => e.metadata.port === port), 20);
      expect(event).toMatchObject({
        event: 'server.network.listener.opened',
        host: 'h1',
        metadata: { protocol: 'tcp', address: '127.0.0.1', port, pid: process.pid },
      });
    } finally {
      server.close();
    }
  });
});

describe('kernel modules', () => {
  it('reports a module that appears in /proc/modules', async () => {
    const dir = tempDir('vigil-agent-mod-');
    const file = join(dir, 'modules');
    writeFileSync(file, 'nf_tables 339968 0 - Live 0x0000000000000000\next4 1040384 1 - Live 0x0000000000000000\n');
    const ctx = context({ modules: { enabled: true, interval_s: 0.05, proc_modules: file } });
    await started(modulesSource(ctx));
    await until('the baseline', 5_000, async () => ctx.buffer.getState('modules:snapshot'), 20);
    appendFileSync(file, 'diamorphine 16384 0 - Live 0x0000000000000000 (OE)\n');
    const event = await until('the module', 5_000, async () => ctx.events()[0], 20);
    expect(event).toMatchObject({ event: 'server.kernel.module_loaded', metadata: { module: 'diamorphine', size: 16384 } });
    expect(ctx.events()).toHaveLength(1);
  });
});

describe('firewall rules', () => {
  it('reads iptables-save and nft rulesets into the facts the perimeter detector reads', () => {
    const ipt = parseIptablesSave(readFileSync(join(FIXTURES, 'firewall/iptables-save.txt'), 'utf8'));
    const nft = parseNftRuleset(readFileSync(join(FIXTURES, 'firewall/nft-ruleset.txt'), 'utf8'));
    for (const rules of [ipt, nft]) {
      const list = Object.values(rules);
      // Loopback and established traffic are scoped, not open; the SSH rule has its source; 443 is open to anywhere.
      expect(list.filter((r) => r.source === 'anywhere' && r.action?.toLowerCase() === 'accept').map((r) => r.port ?? r.rule)).toEqual(
        rules === ipt ? ['policy ACCEPT', '443'] : ['443', 'policy accept'],
      );
      expect(list.find((r) => r.source === '10.0.0.0/8')?.port).toBe('22');
    }
    expect(Object.keys(nft)).not.toContain(expect.stringContaining('elements'));
  });
});

describe('processes', () => {
  it('reports an executable run from a temporary directory as suspicious, and a shell command for the service to judge', async () => {
    const dir = tempDir('vigil-agent-proc-');
    const ctx = context({ processes: { enabled: true, interval_s: 0.05 } });
    await started(processesSource(ctx));
    await new Promise((r) => setTimeout(r, 200));
    copyFileSync('/bin/sleep', join(dir, 'kworker'));
    chmodSync(join(dir, 'kworker'), 0o755);
    const dropped = spawn(join(dir, 'kworker'), ['3']);
    const shell = spawn('sh', ['-c', 'sleep 3; true']);
    try {
      const events = await until(
        'both processes',
        5_000,
        async () => {
          const e = ctx.events();
          return e.some((x) => x.metadata.pid === dropped.pid) && e.some((x) => x.metadata.pid === shell.pid) ? e : undefined;
        },
        20,
      );
      expect(events.find((e) => e.metadata.pid === dropped.pid)).toMatchObject({
        event: 'server.process.suspicious',
        metadata: { technique: 'executable_in_temp_dir', exe: join(dir, 'kworker'), command: `${join(dir, 'kworker')} 3` },
      });
      expect(events.find((e) => e.metadata.pid === shell.pid)).toMatchObject({
        event: 'server.process.executed',
        metadata: { command: 'sh -c sleep 3; true' },
      });
      // The same command line again: not sent a second time within repeat_after_s.
      const again = spawn('sh', ['-c', 'sleep 3; true']);
      const marker = spawn('sh', ['-c', 'sleep 3; echo marker']);
      await until('the next look', 5_000, async () => (ctx.events().some((x) => x.metadata.pid === marker.pid) ? true : undefined), 20);
      again.kill();
      marker.kill();
      expect(ctx.events().some((e) => e.metadata.pid === again.pid)).toBe(false);
      expect(ctx.events().filter((e) => e.metadata.command === 'sh -c sleep 3; true')).toHaveLength(1);
    } finally {
      dropped.kill();
      shell.kill();
    }
  });
});

describe('containers', () => {
  it('reports Docker starts with privilege and mounts, and stops, from the Engine event stream', async () => {
    const dir = tempDir('vigil-agent-docker-');
    const socket = join(dir, 'docker.sock');
    const id = 'f3a9c1d2e4b5a6978812aa34bb56cc78dd90ee12ff34aa56bb78cc90dd12ee34';
    const api = createHttpServer((req, res) => {
      if (req.url?.startsWith('/events')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        const t = Math.floor(Date.now() / 1000);
        res.write(
          JSON.stringify({
            Type: 'container',
            Action: 'start',
            Actor: { ID: id, Attributes: { image: 'alpine:3.20', name: 'tools' } },
            time: t,
            timeNano: t * 1e9,
          }) + '\n',
        );
        res.write(
          JSON.stringify({
            Type: 'container',
            Action: 'die',
            Actor: { ID: id, Attributes: { exitCode: '137', image: 'alpine:3.20', name: 'tools' } },
            time: t,
            timeNano: t * 1e9 + 5,
          }) + '\n',
        );
        return; // the stream stays open, as Docker's does
      }
      if (req.url === `/containers/${id}/json`) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            Name: '/tools',
            Config: { Image: 'alpine:3.20' },
            HostConfig: { Privileged: true, PidMode: 'host', NetworkMode: 'host' },
            Mounts: [{ Type: 'bind', Source: '/var/run/docker.sock', Destination: '/var/run/docker.sock' }],
          }),
        );
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => api.listen(socket, r));
    try {
      const ctx = context({ containers: { enabled: true, sockets: [socket] } });
      await started(containersSource(ctx));
      const events = await until('start and stop', 5_000, async () => (ctx.events().length >= 2 ? ctx.events() : undefined), 20);
      expect(events[0]).toMatchObject({
        event: 'server.container.started',
        metadata: { container: 'tools', image: 'alpine:3.20', privileged: true, pid: 'host', mounts: ['/var/run/docker.sock:/var/run/docker.sock'] },
      });
      expect(events[1]).toMatchObject({ event: 'server.container.stopped', metadata: { container: 'tools', exit_code: 137 } });
    } finally {
      api.closeAllConnections();
      api.close();
    }
  });
});

describe('heartbeat', () => {
  it('carries the buffer depth and counters, and a fresh one replaces an unsent one', async () => {
    const ctx = context({}, { enabled: true, interval_s: 0.1 });
    await started(heartbeatSource(ctx, () => ['auth']));
    await new Promise((r) => setTimeout(r, 350));
    const beats = ctx.events().filter((e) => e.event === 'server.agent.heartbeat');
    expect(beats).toHaveLength(1);
    expect(beats[0]?.metadata).toMatchObject({
      buffer_depth: expect.any(Number),
      buffer_full: false,
      dropped: 0,
      dropped_by_service: 0,
      rejected_invalid: 0,
      sources: ['auth'],
    });
    expect(beats[0]?.metadata.oldest_pending_age_s).toBeGreaterThanOrEqual(0);
  });
});

describe('systemd journal', () => {
  it('follows journalctl for the auth programs and resumes after the saved cursor', async () => {
    const dir = tempDir('vigil-agent-journal-');
    const argsLog = join(dir, 'args');
    // A stand-in for journalctl: records its arguments and prints the fixture entries.
    const fake = join(dir, 'journalctl');
    writeFileSync(fake, `#!/bin/sh\necho "$@" >> '${argsLog}'\ncat '${join(FIXTURES, 'journal/fedora-journal.json')}'\nexec sleep 30\n`);
    chmodSync(fake, 0o755);
    const ctx = context({ journal: { enabled: true, command: fake } });
    const first = await started(journalSource(ctx));
    await until('the entries', 5_000, async () => (ctx.events().length >= 4 ? true : undefined), 20);
    await first.stop();
    expect(types(ctx.events())).toEqual(['server.ssh.login.failure', 'server.ssh.login.failure', 'server.ssh.login.success', 'server.user.sudo']);
    const cursor = ctx.buffer.getState<string>('journal:cursor');
    expect(cursor).toContain('i=1a2b7');

    await started(journalSource(ctx));
    await until('the second start', 5_000, async () => (readFileSync(argsLog, 'utf8').trim().split('\n').length >= 2 ? true : undefined), 20);
    const [firstArgs, secondArgs] = readFileSync(argsLog, 'utf8').trim().split('\n');
    expect(firstArgs).toContain('-o json -f --no-pager -n 0 SYSLOG_IDENTIFIER=sshd');
    expect(secondArgs).toContain(`--after-cursor=${cursor}`);
    // The same entries replayed by the fake are the same events: nothing is buffered twice.
    await new Promise((r) => setTimeout(r, 300));
    expect(ctx.events()).toHaveLength(4);
  });
});

describe('a full buffer', () => {
  it('counts the process starts it could not buffer as dropped, and the heartbeat shows it', async () => {
    const dir = tempDir('vigil-agent-full-');
    const ctx = context({ processes: { enabled: true, interval_s: 0.05 } }, { enabled: true, interval_s: 0.05 });
    const full = new EventBuffer(join(dir, 'full.db'), 1);
    full.append([{ event: 'server.user.sudo', event_id: 'filler', timestamp: new Date().toISOString(), host: 'h1', metadata: {} }]);
    const fullCtx = { ...ctx, buffer: full };
    await started(processesSource(fullCtx));
    await new Promise((r) => setTimeout(r, 200));
    copyFileSync('/bin/sleep', join(dir, 'dropper'));
    chmodSync(join(dir, 'dropper'), 0o755);
    const child = spawn(join(dir, 'dropper'), ['2']);
    try {
      await until('the drop to be counted', 5_000, async () => (full.stats().skippedWhileFull >= 1 ? true : undefined), 20);
      await started(heartbeatSource(fullCtx, () => ['processes']));
      const beat = full.pending(10).find((r) => r.body.includes('server.agent.heartbeat'));
      expect(JSON.parse(beat?.body ?? '{}').metadata).toMatchObject({ buffer_full: true, dropped: full.stats().skippedWhileFull });
      expect(full.pending(10).some((r) => r.body.includes('dropper'))).toBe(false);
    } finally {
      child.kill();
    }
  });
});

describe('a full buffer and the Docker event stream', () => {
  it('stops reading while full and resumes from the last event time once there is room, nothing lost or doubled', async () => {
    const dir = tempDir('vigil-agent-docker-full-');
    const socket = join(dir, 'docker.sock');
    const id = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2';
    const t = Math.floor(Date.now() / 1000);
    const connections: string[] = [];
    const api = createHttpServer((req, res) => {
      if (req.url?.startsWith('/events')) {
        connections.push(req.url);
        res.writeHead(200, { 'content-type': 'application/json' });
        // Docker replays from "since": both events on every connection.
        res.write(JSON.stringify({ Type: 'container', Action: 'start', Actor: { ID: id, Attributes: { name: 'web' } }, time: t, timeNano: t * 1e9 }) + '\n');
        res.write(
          JSON.stringify({ Type: 'container', Action: 'die', Actor: { ID: id, Attributes: { name: 'web', exitCode: '0' } }, time: t, timeNano: t * 1e9 + 7 }) +
            '\n',
        );
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => api.listen(socket, r));
    try {
      const ctx = context({ containers: { enabled: true, sockets: [socket] } });
      const small = new EventBuffer(join(dir, 'small.db'), 1);
      const smallCtx = { ...ctx, buffer: small };
      await started(containersSource(smallCtx));
      await until('the start buffered', 5_000, async () => (small.depth === 1 ? true : undefined), 20);
      expect(small.pending(10).map((r) => r.body.includes('server.container.started'))).toEqual([true]);
      small.acknowledge(
        small.pending(10).map((r) => r.seq),
        0,
      );
      const rows = await until(
        'the stop after the reconnection',
        15_000,
        async () => (small.depth === 1 && connections.length >= 2 ? small.pending(10) : undefined),
        50,
      );
      expect(rows.map((r) => (JSON.parse(r.body) as AgentEvent).event)).toEqual(['server.container.stopped']);
      expect(connections[1]).toContain(`since=${t}`);
    } finally {
      api.closeAllConnections();
      api.close();
    }
  });
});

describe('containerd', () => {
  const EFDC = 'efdc0c13a23ed36819af834d41727dabf07052298dc46d0a8243089a6f448a70';

  it('reports task starts with the container info (privileges, host PID, bind mounts) and init exits, not exec exits', async () => {
    const dir = tempDir('vigil-agent-containerd-');
    const socket = join(dir, 'containerd.sock');
    // At subscription time only "tc" runs (it exits in the recorded stream); efdc starts and exits in it.
    const ctr = fakeCtr(dir, `${FIXTURES}containerd/ctr-events.txt`, { default: ['tc'], 'k8s.io': [], moby: [] });
    const ctx = context({ containers: { enabled: true, ctr_command: ctr.command } });
    await started(containerdSource(ctx, socket, []));
    const events = await until('a start and two stops', 5_000, async () => (ctx.events().length >= 3 ? ctx.events() : undefined), 20);
    expect(events[0]).toMatchObject({
      event: 'server.container.started',
      timestamp: '2022-01-21T15:09:49.830Z',
      metadata: {
        runtime: 'containerd',
        namespace: 'moby',
        container: 'tools',
        image: 'docker.io/library/alpine:3.20',
        privileged: true,
        pid: 'host',
        user: 0,
        mounts: ['/:/host', '/run/containerd/containerd.sock:/run/containerd/containerd.sock'],
      },
    });
    expect(events.slice(1).map((e) => [e.event, e.metadata.namespace, e.metadata.exit_code])).toEqual([
      ['server.container.stopped', 'moby', 0],
      ['server.container.stopped', 'default', 137],
    ]);
    // The subscription and the task lists run side by side: their order varies.
    expect(new Set(ctr.calls())).toEqual(
      new Set([
        `--address ${socket} events`,
        `--address ${socket} namespaces ls`,
        `--address ${socket} --namespace default tasks ls`,
        `--address ${socket} --namespace k8s.io tasks ls`,
        `--address ${socket} --namespace moby tasks ls`,
        `--address ${socket} --namespace moby containers info ${EFDC}`,
      ]),
    );
    expect(ctr.calls().filter((c) => c.includes('containers info'))).toHaveLength(1);
  });

  it('reports what started and stopped while it was not subscribed, from the task lists, once', async () => {
    const dir = tempDir('vigil-agent-containerd-');
    const empty = join(dir, 'no-events.txt');
    writeFileSync(empty, '');
    const ctr = fakeCtr(dir, empty, { default: ['web', 'miner'], 'k8s.io': [] });
    const ctx = context({ containers: { enabled: true, ctr_command: ctr.command } });
    // The last run knew web and old as running.
    ctx.buffer.setState('containerd:running', ['default/web', 'k8s.io/old']);
    const source = containerdSource(ctx, join(dir, 'containerd.sock'), []);
    await started(source);
    const events = await until('the start and the stop', 5_000, async () => (ctx.events().length >= 2 ? ctx.events() : undefined), 20);
    expect(events.map((e) => [e.event, e.metadata.namespace, e.metadata.container_id, e.metadata.from_task_list, e.metadata.exit_code])).toEqual([
      ['server.container.started', 'default', 'miner', true, undefined],
      ['server.container.stopped', 'k8s.io', 'old', true, undefined],
    ]);
    expect(events[0]?.metadata).toMatchObject({ privileged: true, image: 'docker.io/library/alpine:3.20' });
    await until('the running tasks saved', 5_000, async () => (ctx.buffer.getState<string[]>('containerd:running')?.length === 2 ? true : undefined), 20);
    expect(ctx.buffer.getState('containerd:running')).toEqual(['default/web', 'default/miner']);
  });

  it('records the running tasks silently on its first look', async () => {
    const dir = tempDir('vigil-agent-containerd-');
    const empty = join(dir, 'no-events.txt');
    writeFileSync(empty, '');
    const ctr = fakeCtr(dir, empty, { default: ['web'] });
    const ctx = context({ containers: { enabled: true, ctr_command: ctr.command } });
    await started(containerdSource(ctx, join(dir, 'containerd.sock'), []));
    await until('the running tasks saved', 5_000, async () => ctx.buffer.getState<string[]>('containerd:running'), 20);
    expect(ctx.buffer.getState('containerd:running')).toEqual(['default/web']);
    expect(ctx.events()).toEqual([]);
  });

  it("leaves Docker's namespace to the Docker source, and runs next to it when both sockets exist", async () => {
    const dir = tempDir('vigil-agent-containerd-');
    const ctr = fakeCtr(dir, `${FIXTURES}containerd/ctr-events.txt`, { default: ['tc'], moby: [] });
    const ctx = context({ containers: { enabled: true, ctr_command: ctr.command } });
    await started(containerdSource(ctx, join(dir, 'containerd.sock'), ['moby']));
    const events = await until('the default namespace stop', 5_000, async () => (ctx.events().length >= 1 ? ctx.events() : undefined), 20);
    expect(events.map((e) => [e.event, e.metadata.container, e.metadata.exit_code])).toEqual([['server.container.stopped', 'tc', 137]]);
    expect(ctr.calls().some((c) => c.includes('--namespace moby'))).toBe(false);

    writeFileSync(join(dir, 'docker.sock'), '');
    writeFileSync(join(dir, 'containerd.sock'), '');
    const both = context({
      containers: { enabled: 'auto', sockets: [join(dir, 'docker.sock')], containerd_sockets: [join(dir, 'containerd.sock')], ctr_command: ctr.command },
    });
    expect(chooseSources(both).map((s) => s.name)).toContain('containerd');
    const none = context({ containers: { enabled: 'auto', sockets: [join(dir, 'none.sock')], containerd_sockets: [join(dir, 'none.sock')] } });
    expect(chooseSources(none).map((s) => s.name)).not.toContain('containerd');
  });
});
