import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision, startService, tempDir, type Service } from '../../test/process/service.js';
import { EventBuffer } from '../src/buffer.js';
import { ConfigError, DEFAULTS, loadConfig } from '../src/config.js';
import { eventIdOf, makeEvent } from '../src/event.js';
import { createLogger } from '../src/log.js';
import { fullJitter, retryAfterMs, Sender } from '../src/sender.js';
import { listEvents, runCli, until } from './harness.js';

describe('back-off', () => {
  it('full jitter stays within [0, min(max, base * 2^attempt)]', () => {
    expect(fullJitter(0, 1000, 300_000, () => 0.999)).toBe(999);
    expect(fullJitter(3, 1000, 300_000, () => 0.5)).toBe(4000);
    expect(fullJitter(20, 1000, 300_000, () => 0.999)).toBe(299_700);
    expect(fullJitter(5, 1000, 300_000, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const now = Date.parse('2026-01-20T10:00:00Z');
    expect(retryAfterMs('Tue, 20 Jan 2026 10:00:30 GMT', now)).toBe(30_000);
  });
});

describe('configuration', () => {
  it('merges the file over the defaults and the environment over the file', () => {
    const dir = tempDir('vigil-agent-cfg-');
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'server: https://vigil.example.com/\nkey: vgl_sk_file\nsources:\n  auth:\n    paths: [/var/log/custom-auth.log]\n');
    const cfg = loadConfig(file, { VIGIL_AGENT_KEY: 'vgl_sk_env', VIGIL_AGENT_BUFFER_MAX_EVENTS: '500' });
    expect(cfg.server).toBe('https://vigil.example.com');
    expect(cfg.key).toBe('vgl_sk_env');
    expect(cfg.buffer.max_events).toBe(500);
    expect(cfg.sources.auth.paths).toEqual(['/var/log/custom-auth.log']);
    expect(cfg.sources.auth.poll_ms).toBe(1000);
  });

  it('the shipped example lists exactly the defaults', () => {
    const example = new URL('../deploy/config.example.yaml', import.meta.url).pathname;
    const cfg = loadConfig(example, { VIGIL_AGENT_KEY: 'vgl_sk_x', VIGIL_AGENT_HOST: DEFAULTS.host });
    expect(cfg).toEqual({ ...DEFAULTS, server: 'https://vigil.example.com', key: 'vgl_sk_x' });
  });

  it('names the setting that is wrong', () => {
    const dir = tempDir('vigil-agent-cfg-');
    const file = join(dir, 'agent.json');
    writeFileSync(file, JSON.stringify({ server: 'https://v.example.com', key: 'k', sources: { auth: { pathz: [] } } }));
    expect(() => loadConfig(file, {})).toThrow(new ConfigError('unknown setting sources.auth.pathz'));
    writeFileSync(file, JSON.stringify({ server: 'ftp://x', key: '', sender: { batch_size: 500 } }));
    expect(() => loadConfig(file, {})).toThrow(/server must be an http\(s\) URL; key is required.*sender.batch_size must be at most 100/);
  });
});

describe('sender against the service', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(tempDir('vigil-agent-sender-'));
  });
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
  });

  it('sets aside an event the service rejects as invalid and delivers the rest of its batch', async () => {
    const { key } = await provision(service.base, 'pro');
    const dir = tempDir('vigil-agent-sender-');
    const buffer = new EventBuffer(join(dir, 'buffer.db'), 1000);
    const event = (i: number, at: number) =>
      makeEvent({ event: 'server.ssh.login.failure', event_id: eventIdOf('t', i), at, host: 'h1', actor_id: `u${i}`, ip: '192.0.2.1', metadata: {} });
    // A line stamped two days ahead (a host with a wrong clock): the service refuses it.
    buffer.append([event(0, Date.now()), event(1, Date.now() + 2 * 86_400_000), event(2, Date.now())]);
    const sender = new Sender(
      buffer,
      { server: service.base, key, batchSize: 100, backoffBaseMs: 50, backoffMaxMs: 500, requestTimeoutMs: 5000, idlePollMs: 50 },
      createLogger('error'),
    );
    sender.start();
    try {
      const stored = await until('two events stored', 10_000, async () => {
        const e = await listEvents(service.base, key);
        return e.length === 2 ? e : undefined;
      });
      expect(stored.map((e) => e.actor_id).sort()).toEqual(['u0', 'u2']);
      await until('the buffer to drain', 5_000, async () => (buffer.depth === 0 ? true : undefined));
      expect(buffer.stats()).toMatchObject({ depth: 0, sent: 2, rejected: 1 });
    } finally {
      await sender.stop();
      buffer.close();
    }

    // `vigil-agent status` reads the same figures.
    const config = join(dir, 'agent.yaml');
    writeFileSync(config, `buffer:\n  path: ${join(dir, 'buffer.db')}\n`);
    const status = await runCli(['status', '--config', config, '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ depth: 0, sent: 2, rejected: 1, lastError: null });
    const text = await runCli(['status', '--config', config]);
    expect(text.stdout).toContain('pending events:  0 of at most 200000');
    expect(text.stdout).toContain('rejected as invalid: 1');
  });

  it('keeps every event and records the error while the key is refused', async () => {
    const dir = tempDir('vigil-agent-sender-');
    const buffer = new EventBuffer(join(dir, 'buffer.db'), 1000);
    buffer.append([makeEvent({ event: 'server.user.sudo', event_id: eventIdOf('x'), at: Date.now(), host: 'h1', metadata: {} })]);
    const sender = new Sender(
      buffer,
      { server: service.base, key: 'vgl_sk_not_a_key', batchSize: 100, backoffBaseMs: 50, backoffMaxMs: 200, requestTimeoutMs: 5000, idlePollMs: 50 },
      createLogger('error'),
    );
    sender.start();
    try {
      await until('the error', 5_000, async () => (buffer.stats().lastError ? true : undefined));
      expect(buffer.stats()).toMatchObject({ depth: 1, lastError: 'HTTP 401 UNAUTHORIZED' });
    } finally {
      await sender.stop();
      buffer.close();
    }
  });
});
