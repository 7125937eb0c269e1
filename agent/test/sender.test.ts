import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision, startService, storedEvents, tempDir, type Service } from '../../test/process/service.js';
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

describe('sender: what the service taught it', () => {
  let service: Service;
  beforeAll(async () => {
    const dir = tempDir('vigil-agent-learn-');
    const plans = join(dir, 'batch-plans.json');
    const high = { rpm: 100_000_000, eps: 100_000_000, monthly_cap: 100_000_000, overage: 'bill' };
    writeFileSync(plans, JSON.stringify({ plans: { batch50: { ...high, batch_max: 50 } } }));
    service = await startService(dir, { VIGIL_PLANS_FILE: plans });
  });
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
  });

  it('remembers the batch size its plan accepts across restarts, for its own server and key only', async () => {
    const first = await provision(service.base, 'batch50');
    const second = await provision(service.base, 'batch50');
    const path = join(tempDir('vigil-agent-learn-'), 'buffer.db');
    /** One run of the agent: a buffer opened afresh, 120 events, a sender until they are sent; how often a batch was refused. */
    const run = async (key: string, from: number): Promise<number> => {
      const buffer = new EventBuffer(path, 1000);
      const lines: string[] = [];
      const sender = new Sender(
        buffer,
        { server: service.base, key, batchSize: 100, backoffBaseMs: 50, backoffMaxMs: 500, requestTimeoutMs: 5000, idlePollMs: 50 },
        createLogger('info', (line) => lines.push(line)),
      );
      const at = Date.now();
      buffer.append(
        Array.from({ length: 120 }, (_, i) =>
          makeEvent({
            event: 'server.ssh.login.failure',
            event_id: eventIdOf('learn', from + i),
            at,
            host: 'h1',
            actor_id: `u${i}`,
            ip: '192.0.2.1',
            metadata: {},
          }),
        ),
      );
      sender.start();
      try {
        await until('the buffer to drain', 15_000, async () => (buffer.depth === 0 ? true : undefined));
      } finally {
        await sender.stop();
        buffer.close();
      }
      return lines.filter((line) => line.includes('smaller batches')).length;
    };

    expect(await run(first.key, 0)).toBe(1);
    // Restarted on the same buffer, the agent sends batches the plan accepts from the start.
    expect(await run(first.key, 120)).toBe(0);
    // What it learned belongs to the first key: another key (another plan, perhaps) learns its own.
    expect(await run(second.key, 240)).toBe(1);
    expect((await storedEvents(service.base, first.key)).size).toBe(240);
    expect((await storedEvents(service.base, second.key)).size).toBe(120);
  });
});

describe('sender: an overloaded service', () => {
  interface Scripted {
    readonly server: Server;
    readonly base: string;
    /** When each request arrived and when its answer was sent (ms). */
    readonly requests: { arrived: number; answered: number }[];
  }
  /** A server that answers the first request 503 with the given Retry-After, then accepts every event. */
  const overloadedOnce = async (retryAfter: string | undefined): Promise<Scripted> => {
    const requests: { arrived: number; answered: number }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const arrived = Date.now();
        if (requests.length === 0) {
          res.writeHead(503, { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) });
          res.end(JSON.stringify({ error: 'OVERLOADED', message: 'Overloaded; retry later.', retry_after: Number(retryAfter ?? 1) }));
        } else {
          const { events } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: unknown[] };
          res.writeHead(202, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ results: events.map(() => ({ status: 'accepted' })) }));
        }
        requests.push({ arrived, answered: Date.now() });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  };

  const deliverThrough = async (scripted: Scripted, backoffMaxMs: number) => {
    const buffer = new EventBuffer(join(tempDir('vigil-agent-503-'), 'buffer.db'), 1000);
    buffer.append([makeEvent({ event: 'server.user.sudo', event_id: eventIdOf('busy'), at: Date.now(), host: 'h1', metadata: {} })]);
    const sender = new Sender(
      buffer,
      { server: scripted.base, key: 'vgl_sk_test', batchSize: 100, backoffBaseMs: 1, backoffMaxMs, requestTimeoutMs: 5000, idlePollMs: 50 },
      createLogger('error'),
    );
    sender.start();
    try {
      await until('the event to be accepted', 15_000, async () => (buffer.depth === 0 ? true : undefined));
      return buffer.stats();
    } finally {
      await sender.stop();
      buffer.close();
      scripted.server.close();
    }
  };

  it('sends nothing before Retry-After has passed, then delivers the event', async () => {
    const scripted = await overloadedOnce('2');
    const stats = await deliverThrough(scripted, 60_000);
    const [refused, retried] = scripted.requests;
    expect(scripted.requests).toHaveLength(2);
    // The back-off alone would retry within a few milliseconds (base 1 ms).
    expect((retried?.arrived ?? 0) - (refused?.answered ?? 0)).toBeGreaterThanOrEqual(1990);
    expect(stats).toMatchObject({ depth: 0, sent: 1 });
  });

  it("reads a 503's Retry-After up to the back-off maximum", async () => {
    // An hour's Retry-After from a broken proxy: the agent retries after its 1 s maximum instead.
    const stats = await deliverThrough(await overloadedOnce('3600'), 1000);
    expect(stats).toMatchObject({ depth: 0, sent: 1 });
  });
});
