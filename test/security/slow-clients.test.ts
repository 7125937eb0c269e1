import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { roomyApp } from '../http/support.js';

// Many requests per test on a loaded machine: time is not what these tests measure.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

/**
 * Slow and abusive clients against a real listening socket on 127.0.0.1. The attacker
 * connects from 127.0.0.2 (all of 127/8 is loopback on Linux), the honest client from
 * 127.0.0.1, so the per-IP connection cap separates them as it would two hosts.
 */
const CAP = 20;
let t: TestApp;
let port: number;
let key: string;

beforeAll(async () => {
  t = await roomyApp({ VIGIL_MAX_CONNECTIONS_PER_IP: String(CAP) });
  await t.vigil.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.vigil.app.server.address() as { port: number }).port;
  key = (await t.account('pro')).secret;
});
afterAll(() => t.close());

function open(localAddress = '127.0.0.2'): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => undefined); // a reset by the server is an expected outcome
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

const settledWithin = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

async function honestRequest(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'auth.login.success', actor_id: 'alice', ip: '198.51.100.7' }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('slowloris', () => {
  it('many connections sending headers byte by byte: the cap closes the excess, an honest client keeps being served', async () => {
    const ATTACKERS = 3 * CAP;
    const sockets = await Promise.all(Array.from({ length: ATTACKERS }, () => open()));
    const header = `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`;
    const statuses: number[] = [];
    // Bounded: a few bytes per attacker per round, an honest request every round.
    for (let round = 0; round < 20; round++) {
      for (const { socket } of sockets) if (!socket.destroyed) socket.write(header[round % header.length]!);
      statuses.push(await honestRequest());
    }
    expect(statuses.every((s) => s === 202)).toBe(true);
    const alive = sockets.filter(({ socket }) => !socket.destroyed && socket.readyState === 'open');
    expect(alive.length).toBeLessThanOrEqual(CAP);
    expect(t.vigil.connections.open('127.0.0.2')).toBeLessThanOrEqual(CAP);
    expect(t.vigil.connections.refused).toBeGreaterThanOrEqual(ATTACKERS - CAP);
    for (const { socket } of sockets) socket.destroy();
    await Promise.all(sockets.map((s) => s.closed));
  });

  it('after the attacker leaves, its address can connect again', async () => {
    // The count of the closed attacker sockets drops back (bounded wait for the close events).
    for (let i = 0; i < 100 && t.vigil.connections.open('127.0.0.2') > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(t.vigil.connections.open('127.0.0.2')).toBe(0);
    const { socket, closed } = await open();
    socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const data: Buffer[] = [];
    socket.on('data', (d: Buffer) => data.push(d));
    await closed;
    expect(Buffer.concat(data).toString()).toMatch(/^HTTP\/1\.1 200/);
  });
});

describe('timeouts', () => {
  it('the server is configured with header, request, keep-alive and per-socket limits', () => {
    const server = t.vigil.app.server;
    expect(server.headersTimeout).toBeGreaterThan(0);
    expect(server.headersTimeout).toBeLessThanOrEqual(10_000);
    expect(server.requestTimeout).toBeGreaterThan(0);
    expect(server.requestTimeout).toBeLessThanOrEqual(30_000);
    expect(server.keepAliveTimeout).toBeLessThanOrEqual(10_000);
    expect(server.timeout).toBeGreaterThan(0);
    expect(server.maxRequestsPerSocket).toBeGreaterThan(0);
  });

  it('an idle connection with half its headers, and a chunked body that never ends, are closed by the idle timeout', async () => {
    // The configured idle timeout is 30 s; shortened here (same mechanism) to keep the test short.
    const server = t.vigil.app.server;
    const before = server.timeout;
    server.timeout = 300;
    try {
      const halfHeaders = await open('127.0.0.3');
      halfHeaders.socket.write('POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthor');
      const endless = await open('127.0.0.3');
      endless.socket.write(
        `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"eve\r\n`,
      );
      expect(await settledWithin(Promise.all([halfHeaders.closed, endless.closed]), 10_000)).toBe(true);
      // Served meanwhile and afterwards.
      expect(await honestRequest()).toBe(202);
    } finally {
      server.timeout = before;
    }
  });

  it('a keep-alive socket serves at most maxRequestsPerSocket requests, then closes', async () => {
    const server = t.vigil.app.server;
    const before = server.maxRequestsPerSocket;
    server.maxRequestsPerSocket = 3;
    try {
      const { socket } = await open('127.0.0.4');
      const data: Buffer[] = [];
      socket.on('data', (d: Buffer) => data.push(d));
      for (let i = 0; i < 5; i++) socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      // Node answers the 3rd with "Connection: close" and refuses later ones on that socket.
      const text = () => Buffer.concat(data).toString();
      for (let i = 0; i < 2000 && (text().match(/HTTP\/1\.1 /g)?.length ?? 0) < 5; i++) await new Promise((r) => setTimeout(r, 5));
      expect(text().match(/HTTP\/1\.1 200/g)?.length).toBe(3);
      expect(text().toLowerCase()).toContain('connection: close');
      socket.destroy();
    } finally {
      server.maxRequestsPerSocket = before;
    }
  });
});
