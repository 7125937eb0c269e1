import { copyFileSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, freePort, provision, startService, tempDir, type Service } from '../../test/process/service.js';
import { EventBuffer } from '../src/buffer.js';
import { compare, duplicatesAnswered, fakeCtr, listEvents, sleep, startAgent, until, writeAgentConfig, writeLines, type AgentProcess } from './harness.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;

/** No loss through a service outage and through agent crashes (SIGKILL mid-send); detection end to end. */
describe('agent delivery through outages and crashes', () => {
  const agents: AgentProcess[] = [];
  const services: Service[] = [];

  /** A fresh service with a Pro key, and an empty auth log in a new temp folder. */
  async function serviceAndLog(prefix: string): Promise<{ dir: string; service: Service; key: string; log: string }> {
    const dir = tempDir(prefix);
    const service = await startService(dir);
    services.push(service);
    const { key } = await provision(service.base, 'pro');
    const log = join(dir, 'auth.log');
    writeFileSync(log, '');
    return { dir, service, key, log };
  }

  afterAll(async () => {
    for (const a of agents) a.child.kill('SIGKILL');
    for (const s of services) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  it.concurrent('the service stopped and restarted: every line stored exactly once', async () => {
    const dir = tempDir('vigil-agent-outage-');
    const port = String(await freePort());
    // Both runs of the service answer on the same port, as a real server's address stays put.
    const base = `http://127.0.0.1:${port}`;
    let service = await startService(dir, { VIGIL_PORT: port });
    services.push(service);
    const { key } = await provision(base, 'pro');
    const log = join(dir, 'auth.log');
    writeFileSync(log, '');
    const agent = startAgent(writeAgentConfig(dir, base, key, log));
    agents.push(agent);
    await until('the agent to follow the log', 10_000, async () => (agent.stderr.some((l) => l.includes('vigil-agent running')) ? true : undefined));
    writeLines(log, 0, 100);
    await until('the first lines to be stored', 20_000, async () => ((await listEvents(base, key)).length > 0 ? true : undefined));

    service.child.kill('SIGTERM');
    await service.exited;
    // Written while the service is down: buffered, retried with back-off.
    writeLines(log, 100, 250);
    await until('the agent to see the outage', 10_000, async () => (agent.stderr.some((l) => l.includes('network:')) ? true : undefined));
    await sleep(3_000);
    writeLines(log, 250, 300);

    service = await startService(dir, { VIGIL_PORT: port });
    services.push(service);
    const stored = await until('every line to be stored', 30_000, async () => {
      const events = await listEvents(base, key);
      return events.length >= 300 ? events : undefined;
    });
    await sleep(1_000);
    const result = compare(300, await listEvents(base, key));
    const duplicates = await duplicatesAnswered(base);
    console.log(
      `[no-loss outage] ${JSON.stringify({ ...result, missing: result.missing.length, first_look: stored.length, resends_answered_as_duplicates: duplicates })}`,
    );
    expect(result.missing).toEqual([]);
    expect(result.wrongContent).toBe(0);
    expect(result.stored).toBe(300);
    expect(result.distinctEventIds).toBe(300);
  });

  it.concurrent('the agent killed with SIGKILL mid-send five times: every line stored exactly once', async () => {
    const { dir, service, key, log } = await serviceAndLog('vigil-agent-crash-');
    // Small batches: many requests in flight, so a kill lands between a send and its acknowledgement.
    const config = writeAgentConfig(dir, service.base, key, log, { batch_size: 5 });
    let written = 0;
    let agent = startAgent(config);
    agents.push(agent);
    await until('the agent to follow the log', 10_000, async () => (agent.stderr.some((l) => l.includes('vigil-agent running')) ? true : undefined));
    let kills = 0;
    const pendingAtKill: number[] = [];
    for (let round = 0; round < 5; round++) {
      writeLines(log, written, written + 120);
      written += 120;
      const before = (await listEvents(service.base, key)).length;
      // Kill once sending is under way and lines are still pending: after 10, 25, 40, 55 and 70
      // of the round's 120 lines are stored, a different point of the send cycle each round.
      const target = before + 10 + round * 15;
      await until('sending to be under way', 20_000, async () => ((await listEvents(service.base, key)).length >= target ? true : undefined), 5);
      agent.child.kill('SIGKILL');
      await agent.exited;
      kills++;
      const buffer = new EventBuffer(join(dir, 'buffer.db'), 100_000, true);
      pendingAtKill.push(buffer.depth);
      buffer.close();
      writeLines(log, written, written + 30); // written while the agent is down
      written += 30;
      agent = startAgent(config);
      agents.push(agent);
    }
    const stored = await until('every line to be stored', 60_000, async () => {
      const events = await listEvents(service.base, key);
      return events.length >= written ? events : undefined;
    });
    await sleep(1_500);
    const result = compare(written, await listEvents(service.base, key));
    const duplicates = await duplicatesAnswered(service.base);
    console.log(
      `[no-loss sigkill] ${JSON.stringify({ ...result, missing: result.missing.length, kills, pending_at_kill: pendingAtKill, first_look: stored.length, resends_answered_as_duplicates: duplicates })}`,
    );
    expect(kills).toBe(5);
    // Each kill left events in the buffer: they were delivered by the next run.
    expect(pendingAtKill.every((n) => n > 0)).toBe(true);
    expect(result.missing).toEqual([]);
    expect(result.wrongContent).toBe(0);
    expect(result.stored).toBe(written);
    expect(result.distinctEventIds).toBe(written);
  });

  it.concurrent('log rotations with late writes, copytruncate and immediate compression: every line stored exactly once', async () => {
    const { dir, service, key, log } = await serviceAndLog('vigil-agent-rotation-');
    const agent = startAgent(writeAgentConfig(dir, service.base, key, log));
    agents.push(agent);
    await until('the agent to follow the log', 10_000, async () => (agent.stderr.some((l) => l.includes('vigil-agent running')) ? true : undefined));
    const phases: Record<string, { from: number; to: number }> = {};
    let written = 0;
    const phase = async (name: string, run: () => Promise<void>) => {
      // Rotations are at least a poll apart: the agent has looked at the log since the last one.
      await sleep(1_000);
      const from = written;
      await run();
      phases[name] = { from, to: written };
    };
    const write = (path: string, n: number) => {
      writeLines(path, written, written + n);
      written += n;
    };
    write(log, 20);
    await phase('rename with late writes', async () => {
      write(log, 10);
      renameSync(log, `${log}.1`);
      writeFileSync(log, '');
      // The writer keeps writing to the renamed file for a while before it reopens the log.
      for (const delay of [100, 300, 600, 1_000, 2_500]) {
        await sleep(delay);
        write(`${log}.1`, 3);
      }
      write(log, 10);
    });
    await phase('copytruncate', async () => {
      write(log, 10);
      copyFileSync(log, `${log}.2`);
      truncateSync(log, 0);
      write(log, 10);
      await sleep(500);
    });
    await phase('rename then immediate compression', async () => {
      write(log, 10);
      renameSync(log, `${log}.3`);
      writeFileSync(log, '');
      write(`${log}.3`, 5);
      writeFileSync(`${log}.3.gz`, gzipSync(readFileSync(`${log}.3`)));
      rmSync(`${log}.3`);
      write(log, 10);
    });
    // A line lost never arrives: the comparison below names it rather than the wait timing out.
    await until('every line to be stored', 20_000, async () => ((await listEvents(service.base, key)).length >= written ? true : undefined)).catch(
      () => undefined,
    );
    await sleep(1_000);
    const events = await listEvents(service.base, key);
    const result = compare(written, events);
    const lost = (p: { from: number; to: number }) => result.missing.filter((i) => i >= p.from && i < p.to).length;
    console.log(
      `[no-loss rotation] ${JSON.stringify({ ...result, missing: result.missing.length, phases: Object.fromEntries(Object.entries(phases).map(([k, p]) => [k, { written: p.to - p.from, lost: lost(p) }])) })}`,
    );
    expect(result.missing).toEqual([]);
    expect(result.wrongContent).toBe(0);
    expect(result.stored).toBe(written);
    expect(result.distinctEventIds).toBe(written);
  });

  it.concurrent('an SSH brute force then a success in the watched log raises both host alerts', async () => {
    const { dir, service, key, log } = await serviceAndLog('vigil-agent-e2e-');
    const agent = startAgent(writeAgentConfig(dir, service.base, key, log));
    agents.push(agent);
    await until('the agent to follow the log', 10_000, async () => (agent.stderr.some((l) => l.includes('vigil-agent running')) ? true : undefined));
    const t0 = Date.now() - 60_000;
    const stamp = (s: number) => new Date(t0 + s * 1000).toISOString();
    let text = '';
    for (let i = 0; i < 12; i++) {
      text += `${stamp(i * 2)} test-host sshd[${5000 + i}]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.200  user=root\n`;
      text += `${stamp(i * 2 + 1)} test-host sshd[${5000 + i}]: Failed password for root from 203.0.113.200 port ${40000 + i} ssh2\n`;
    }
    text += `${stamp(40)} test-host sshd[5100]: Accepted password for root from 203.0.113.200 port 40100 ssh2\n`;
    writeFileSync(log, text, { flag: 'a' });
    const alerts = await until('both alerts', 30_000, async () => {
      const res = await api(service.base, 'GET', '/v1/alerts?limit=100', key);
      const types = new Set((res.json.data as { type: string }[]).map((a) => a.type));
      return types.has('host.ssh_brute_force') && types.has('host.ssh_login_after_failures') ? res.json.data : undefined;
    });
    const types = (alerts as { type: string; subject?: string }[]).map((a) => a.type).sort();
    console.log(`[e2e] alerts: ${types.join(', ')}`);
    expect(types).toContain('host.ssh_brute_force');
    expect(types).toContain('host.ssh_login_after_failures');
    // 12 failures counted once each (the PAM echo lines are not), plus the success.
    const events = await listEvents(service.base, key);
    expect(events.filter((e) => e.event === 'server.ssh.login.failure')).toHaveLength(12);
    expect(events.filter((e) => e.event === 'server.ssh.login.success')).toHaveLength(1);
  });

  it.concurrent('a privileged containerd container with the host root mounted, seen through ctr, raises host.container_escape', async () => {
    const { dir, service, key, log } = await serviceAndLog('vigil-agent-e2e-containerd-');
    const socket = join(dir, 'containerd.sock');
    writeFileSync(socket, '');
    // No Docker socket: containerd's moby namespace is followed too, and the recorded stream starts a container there.
    const ctr = fakeCtr(dir, `${FIXTURES}containerd/ctr-events.txt`, { default: ['tc'], moby: [] });
    const containers = { enabled: 'auto', sockets: [join(dir, 'docker.sock')], containerd_sockets: [socket], ctr_command: ctr.command };
    const agent = startAgent(writeAgentConfig(dir, service.base, key, log, { containers }));
    agents.push(agent);
    const alert = await until('the escape alert', 30_000, async () => {
      const res = await api(service.base, 'GET', '/v1/alerts?limit=100', key);
      return (res.json.data as { type: string; evidence?: Record<string, unknown> }[]).find((a) => a.type === 'host.container_escape');
    });
    expect(JSON.stringify(alert)).toContain('privileged_host_root_mount');
    // The stops come after the start in the stream, so they may still be on their way.
    const events = await until('both container stops stored', 30_000, async () => {
      const stored = await listEvents(service.base, key);
      return stored.filter((e) => e.event === 'server.container.stopped').length >= 2 ? stored : undefined;
    });
    expect(events.filter((e) => e.event === 'server.container.started').map((e) => e.metadata?.container)).toEqual(['tools']);
    expect(
      events
        .filter((e) => e.event === 'server.container.stopped')
        .map((e) => e.metadata?.exit_code)
        .sort(),
    ).toEqual([0, 137]);
    agent.child.kill('SIGTERM');
    await agent.exited;
  });
});
