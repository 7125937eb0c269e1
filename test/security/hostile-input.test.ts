import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Hundreds of requests per test on a loaded machine: time is not what these tests measure.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp } from '../http/support.js';

/**
 * Hostile bodies through the whole HTTP lifecycle (Fastify inject): whatever arrives, the
 * answer is never a 5xx and every rejection has the error shape.
 */
let t: TestApp;
let key: string;
let tried = 0;
const heapAtStart = process.memoryUsage().heapUsed;

beforeAll(async () => {
  t = await roomyApp();
  // Pro: both endpoints open (Free would answer 403 on every batch).
  key = (await t.account('pro')).secret;
});
afterAll(async () => {
  // The closing note records this number.
  console.log(`hostile-input: ${tried} inputs tried; heap ${Math.round(heapAtStart / 1e6)} MB -> ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB`);
  await t.close();
});

const URLS = ['/v1/events', '/v1/events/batch'] as const;

async function send(
  url: string,
  payload: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<LightMyRequestResponse> {
  tried++;
  return t.vigil.app.inject({ method: 'POST', url, headers: { ...bearer(key), ...headers }, payload });
}

/** Never a 5xx; a non-2xx always carries {error, message, request_id}. */
function expectHandled(res: LightMyRequestResponse, input: unknown): void {
  if (res.statusCode >= 500) throw new Error(`${res.statusCode} for ${String(input).slice(0, 200)}: ${res.body.slice(0, 300)}`);
  if (res.statusCode >= 300) {
    const label = `${res.statusCode} for ${String(input).slice(0, 200)}: ${res.body.slice(0, 300)}`;
    const body = res.json();
    expect(typeof body.error, label).toBe('string');
    expect(typeof body.message, label).toBe('string');
    expect(String(body.request_id), label).toMatch(/^req_/);
  }
}

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const event = (extra: Record<string, unknown> = {}) => ({ event: 'auth.login.failure', actor_id: 'alice', ip: '203.0.113.7', ...extra });

describe('random bodies', () => {
  it('random JSON values as bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(...URLS), async (value, url) => {
        const text = JSON.stringify(value) ?? 'null';
        expectHandled(await send(url, text), text);
      }),
      { numRuns: 400 },
    );
  });

  it('random values shaped like events (random fields, metadata, events arrays)', async () => {
    const anyJson = fc
      .anything({
        withBigInt: false,
        withDate: true,
        withMap: false,
        withSet: false,
        withTypedArray: false,
        withSparseArray: true,
        withNullPrototype: true,
        withObjectString: true,
      })
      .map((v) => JSON.stringify(v) ?? null);
    const eventish = fc.record(
      {
        event: fc.oneof(fc.constantFrom('auth.login.failure', 'auth.login.success', 'data.exported', 'x', '', 'auth.'), fc.string()),
        actor_id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        ip: fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()),
        metadata: fc.oneof(fc.jsonValue(), fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...PROTO_KEYS)), fc.jsonValue())),
        extra: anyJson,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(eventish, fc.boolean(), async (ev, batch) => {
        const text = batch ? JSON.stringify({ events: [ev, ev] }) : JSON.stringify(ev);
        expectHandled(await send(batch ? URLS[1] : URLS[0], text), text);
      }),
      { numRuns: 400 },
    );
  });

  it('raw random bytes labelled application/json', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 512 }), fc.constantFrom(...URLS), async (bytes, url) => {
        expectHandled(await send(url, Buffer.from(bytes)), Buffer.from(bytes).toString('hex'));
      }),
      { numRuns: 400 },
    );
  });

  it('random strings with the prototype keys spliced into valid events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTO_KEYS), fc.constantFrom('top', 'metadata', 'array', 'batch'), fc.jsonValue(), async (proto, where, value) => {
        const inner = JSON.stringify(value) ?? 'null';
        const base = '{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7"';
        const text =
          where === 'top'
            ? `${base},"${proto}":${inner}}`
            : where === 'metadata'
              ? `${base},"metadata":{"ok":1,"${proto}":${inner}}}`
              : where === 'array'
                ? `${base},"metadata":{"list":[1,{"${proto}":${inner}}]}}`
                : `{"events":[${base}},${base},"${proto}":${inner}}]}`;
        const res = await send(where === 'batch' ? URLS[1] : URLS[0], text);
        expectHandled(res, text);
        expect(res.statusCode).toBe(400);
      }),
      { numRuns: 200 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('hand-written hostile cases', () => {
  const valid = JSON.stringify(event());

  it.each([
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('{"event":"auth.login.failure","actor_id":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('","ip":"203.0.113.7"}')]),
    ],
    ['lone surrogate escape', '{"event":"auth.login.failure","actor_id":"\\ud800","ip":"203.0.113.7"}'],
    ['NUL in strings', '{"event":"auth.login.failure","actor_id":"a\\u0000b","ip":"203.0.113.7"}'],
    ['1e400', '{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7","metadata":{"n":1e400}}'],
    ['-0', '{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7","metadata":{"n":-0},"timestamp":-0}'],
    ['2**64', '{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7","metadata":{"n":18446744073709551616},"timestamp":18446744073709551616}'],
    ['huge exponent timestamp', '{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7","timestamp":1e308}'],
    ['duplicate keys', '{"event":"auth.login.failure","event":"data.exported","actor_id":"a","actor_id":{"x":1},"ip":"203.0.113.7"}'],
    ['BOM', `\ufeff${valid}`],
    ['empty body', ''],
    ['whitespace body', '   \n'],
    ['null', 'null'],
    ['number', '42'],
    ['array of events on the single endpoint', `[${valid}]`],
    ['truncated', valid.slice(0, -3)],
    ['trailing garbage', `${valid}xyz`],
    ['two documents', `${valid}${valid}`],
  ])('%s', async (name, payload) => {
    for (const url of URLS) {
      const res = await send(url, payload);
      expectHandled(res, name);
      if (name === 'empty body' || name === 'truncated' || name === 'trailing garbage' || name === 'two documents') expect(res.statusCode).toBe(400);
    }
  });

  it('a 1 MB string in a single event is 413 PAYLOAD_TOO_LARGE; a batch over 1 MiB too', async () => {
    const big = 'a'.repeat(1024 * 1024);
    const single = await send(URLS[0], JSON.stringify(event({ actor_id: big })));
    expectHandled(single, 'big');
    expect(single.statusCode).toBe(413);
    expect(single.json().error).toBe('PAYLOAD_TOO_LARGE');
    const batch = await send(URLS[1], JSON.stringify({ events: [event({ metadata: { s: big } })] }));
    expect(batch.statusCode).toBe(413);
    const meta = await send(URLS[0], JSON.stringify(event({ metadata: { s: big } })));
    expect(meta.statusCode).toBe(413);
  });

  it('nesting 100,000 levels deep (raw text) as body and in metadata', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const deepObj = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    for (const url of URLS) {
      for (const text of [deep(100_000), deepObj(100_000)]) expectHandled(await send(url, text), 'deep body');
    }
    // In metadata: the single endpoint's 64 KiB body limit allows ~30,000 levels; the batch one 100,000.
    for (const [url, n] of [
      [URLS[0], 25_000],
      [URLS[1], 100_000],
    ] as const) {
      const ev = `{"event":"auth.login.failure","actor_id":"a","ip":"203.0.113.7","metadata":{"x":${deep(n)},"y":${deepObj(Math.floor(n / 10))}}}`;
      const res = await send(url, url === URLS[1] ? `{"events":[${ev}]}` : ev);
      expectHandled(res, 'deep metadata');
      expect(res.statusCode).toBe(400);
    }
  });

  it('wrong, missing and odd content types', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'content-type': 'application/xml' },
      { 'content-type': 'application/jsonx' },
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'APPLICATION/JSON' },
      { 'content-type': '' },
      { 'content-type': ';;;' },
    ];
    for (const url of URLS) {
      for (const headers of cases) {
        const res = await send(url, valid, headers);
        expectHandled(res, JSON.stringify(headers));
      }
      const missing = await send(url, valid, {});
      expect([400, 415]).toContain(missing.statusCode);
      const text = await send(url, valid, { 'content-type': 'text/plain' });
      expect(text.statusCode).toBe(415);
      expect(text.json().error).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('hostile query strings and paths on the read API', async () => {
    const paths = [
      '/v1/events?limit=-1',
      '/v1/events?limit=1e400',
      '/v1/alerts?limit=1e400',
      '/v1/events?limit=9007199254740993',
      '/v1/events?cursor=%00%ff',
      '/v1/events?since=abc',
      '/v1/events?min_risk=NaN',
      '/v1/events?type[]=a&type[]=b',
      '/v1/events?__proto__=1',
      '/v1/events/%2e%2e%2f',
      '/v1/events/' + 'x'.repeat(10_000),
      '/v1/events?cursor=' + 'A'.repeat(5000),
      '/v1/%ff',
      '/v1/events/%zz',
      '/v1/alerts/%e0%80%80',
      '/v1/events/' + '%41'.repeat(300),
    ];
    for (const url of paths) {
      tried++;
      const res = await t.vigil.app.inject({ method: 'GET', url, headers: bearer(key) });
      expectHandled(res, url);
    }
  });

  it('heap stays bounded after all of the above', async () => {
    (globalThis as { gc?: () => void }).gc?.();
    // Generous bound: the inputs above total hundreds of MB of text if anything were retained.
    expect(process.memoryUsage().heapUsed - heapAtStart).toBeLessThan(400e6);
  });
});
