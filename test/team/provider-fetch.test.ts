import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedProviderFetch } from '../../src/team/provider-fetch.js';
import { LOOPBACK_RANGES, type SsrfGuard } from '../../src/webhooks/ssrf.js';

/** A provider on loopback: /big answers more than the bound, /moved redirects, anything else echoes the request. */
let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/big') return void response.end('x'.repeat(4096));
    if (request.url === '/moved') return void response.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => response.setHeader('content-type', 'application/json').end(JSON.stringify({ method: request.method, body })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

/** Every name resolves to the loopback server's address. */
const toLoopback = async () => [{ address: '127.0.0.1', family: 4 }];
const options = { method: 'GET', headers: {}, body: undefined, redirect: 'manual' as const };

describe('guardedProviderFetch', () => {
  it('refuses a name that resolves to a forbidden address when it connects, and a forbidden literal before it', async () => {
    const guard: SsrfGuard = { allowed: [], resolve: toLoopback };
    await expect(guardedProviderFetch(guard)(`http://idp.example:${port}/`, options)).rejects.toThrow('idp.example resolves to 127.0.0.1, a loopback address');
    await expect(guardedProviderFetch(guard)('https://169.254.169.254/latest', options)).rejects.toThrow('a cloud metadata address');
  });

  it('reaches an allowed range, sends form bodies, and hands a redirect back unfollowed', async () => {
    const fetch = guardedProviderFetch({ allowed: LOOPBACK_RANGES, resolve: toLoopback });
    const answer = await fetch(`http://idp.example:${port}/token`, { ...options, method: 'POST', body: new URLSearchParams({ code: 'abc' }) } as never);
    expect(await answer.json()).toEqual({ method: 'POST', body: 'code=abc' });
    const moved = await fetch(`http://idp.example:${port}/moved`, options);
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('http://169.254.169.254/');
  });

  it('cuts off an answer larger than its bound', async () => {
    const fetch = guardedProviderFetch({ allowed: LOOPBACK_RANGES, resolve: toLoopback }, 1024);
    await expect(fetch(`http://127.0.0.1:${port}/big`, options)).rejects.toThrow('exceeds 1024 bytes');
  });
});
