import { createServer, type IncomingMessage, type Server } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestContext, type RequestContextOptions } from '../src/index.js';

/** A real HTTP server whose handler answers with what requestContext read from the request. */
function serve(read: (req: IncomingMessage) => unknown): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(read(req)));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })),
  );
}

describe('requestContext: ip, user_agent and request from an incoming request', () => {
  let options: RequestContextOptions = {};
  let node: { server: Server; url: string };
  let express: { server: Server; url: string };
  let fastify: FastifyInstance;
  let fastifyUrl: string;
  beforeAll(async () => {
    node = await serve((req) => requestContext(req, options));
    // Express keeps the full URL in originalUrl and strips a router's mount path from url.
    express = await serve((req) => {
      const expressReq = Object.assign(req, { originalUrl: req.url });
      expressReq.url = '/after-mount';
      return requestContext(expressReq, options);
    });
    fastify = Fastify();
    fastify.all('/*', async (request) => requestContext(request, options));
    fastifyUrl = await fastify.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    node.server.close();
    express.server.close();
    await fastify.close();
  });

  const read = async (base: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
    (await fetch(base + path, { method, headers: { 'user-agent': 'Mozilla/5.0 test', ...headers } })).json();

  it.each([
    ['node http', () => node.url],
    ['express', () => express.url],
    ['fastify', () => fastifyUrl],
  ])('%s: method, path without the query, user agent, socket address', async (_shape, base) => {
    options = {};
    expect(await read(base(), '/login?next=%2Fhome&token=secret', {}, 'POST')).toEqual({
      ip: '127.0.0.1',
      user_agent: 'Mozilla/5.0 test',
      request: { method: 'POST', path: '/login' },
    });
  });

  it('adds the query and the status only when asked', async () => {
    options = { includeQuery: true, status: 401 };
    expect((await read(node.url, '/login?next=1')).request).toEqual({ method: 'GET', path: '/login', query: 'next=1', status: 401 });
  });

  it('ignores X-Forwarded-For unless proxies are trusted (a client can write anything there)', async () => {
    options = {};
    expect((await read(node.url, '/', { 'x-forwarded-for': '203.0.113.9' })).ip).toBe('127.0.0.1');
  });

  it('trustProxy: true believes the whole chain, a number counts the proxies in front', async () => {
    const chain = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7, 10.0.0.2' };
    options = { trustProxy: true };
    expect((await read(node.url, '/', chain)).ip).toBe('203.0.113.9');
    options = { trustProxy: 1 };
    expect((await read(node.url, '/', chain)).ip).toBe('10.0.0.2');
    options = { trustProxy: 2 };
    expect((await read(fastifyUrl, '/', chain)).ip).toBe('198.51.100.7');
  });

  it('trustProxy as addresses and CIDRs skips only those proxies, from the right (IPv4 and IPv6)', async () => {
    options = { trustProxy: ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32'] };
    expect((await read(node.url, '/', { 'x-forwarded-for': '198.51.100.7, 2001:db8::5, 10.1.2.3' })).ip).toBe('198.51.100.7');
    // A spoofed entry left of an untrusted hop is never reached.
    expect((await read(node.url, '/', { 'x-forwarded-for': '1.1.1.1, 203.0.113.9, 10.1.2.3' })).ip).toBe('203.0.113.9');
    expect((await read(express.url, '/', { 'x-forwarded-for': '[2001:db9::1]:443' })).ip).toBe('2001:db9::1');
  });
});
