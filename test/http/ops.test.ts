import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/storage/store.js';
import { SCALE_OUT, testApp, type TestApp } from '../helpers/app.js';
import { faultyStore, postEvent } from './support.js';

/** The value of a Prometheus sample line `name{labels} value`, matching every label given. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('operations endpoints', () => {
  let t: TestApp;
  let faults: ReturnType<typeof faultyStore>['faults'];
  let key: string;
  beforeAll(async () => {
    const faulty = faultyStore();
    faults = faulty.faults;
    t = await testApp({}, { store: faulty.store });
    key = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  const get = (url: string) => t.vigil.app.inject({ method: 'GET', url });

  it('/healthz answers 200 without a key', async () => {
    const res = await get('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 while storage answers, 503 when ping fails, and 200 again after', async () => {
    const ready = await get('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', storage: 'sqlite' });
    faults.ping = () => new StoreUnavailableError('database is locked');
    try {
      const down = await get('/readyz');
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ status: 'unavailable' });
      // /healthz is about the process, not the storage.
      expect((await get('/healthz')).statusCode).toBe(200);
    } finally {
      delete faults.ping;
    }
    expect((await get('/readyz')).statusCode).toBe(200);
  });

  it('/metrics: requests by route and status, events by outcome, commit-group size and latency', async () => {
    expect((await postEvent(t, key, { event: 'auth.login' })).statusCode).toBe(202);
    expect((await postEvent(t, key, { event: 'auth.login' })).statusCode).toBe(202);
    expect((await postEvent(t, key, { event: 'Nope' })).statusCode).toBe(400);
    const res = await get('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toContain('# TYPE vigil_http_requests_total counter');
    expect(sample(text, 'vigil_http_requests_total', { route: '/v1/events', method: 'POST', status: '202' })).toBe(2);
    expect(sample(text, 'vigil_http_requests_total', { route: '/v1/events', method: 'POST', status: '400' })).toBe(1);
    expect(sample(text, 'vigil_events_total', { outcome: 'accepted' })).toBe(2);
    expect(sample(text, 'vigil_events_total', { outcome: 'rejected_invalid' })).toBe(1);
    expect(sample(text, 'vigil_commit_group_events_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'vigil_commit_group_events_sum')).toBe(2);
    expect(sample(text, 'vigil_commit_duration_seconds_count', { ok: 'true' })).toBeGreaterThanOrEqual(1);
    expect(text).toContain('vigil_http_request_duration_seconds_bucket');
    // Counts made after a read add to what that read showed.
    expect((await postEvent(t, key, { event: 'auth.login' })).statusCode).toBe(202);
    const again = (await get('/metrics')).body;
    expect(sample(again, 'vigil_http_requests_total', { route: '/v1/events', method: 'POST', status: '202' })).toBe(3);
    expect(sample(again, 'vigil_events_total', { outcome: 'accepted' })).toBe(3);
  });

  it('/metrics counts events refused because storage is unavailable', async () => {
    faults.commit = () => new StoreUnavailableError('disk full');
    try {
      expect((await postEvent(t, key, { event: 'auth.login' })).statusCode).toBe(503);
    } finally {
      delete faults.commit;
    }
    const text = (await get('/metrics')).body;
    expect(sample(text, 'vigil_events_total', { outcome: 'rejected_unavailable' })).toBe(1);
    expect(sample(text, 'vigil_commit_duration_seconds_count', { ok: 'false' })).toBe(1);
  });

  it('/metrics names the process metrics with one prefix', async () => {
    const text = (await get('/metrics')).body;
    expect(text).toContain('# TYPE vigil_process_cpu_seconds_total counter');
    expect(text).toContain('vigil_nodejs_heap_size_used_bytes');
    expect(text).not.toMatch(/vigil_process_process_|vigil_process_nodejs_/);
  });

  it('/openapi.json is OpenAPI 3.1 with the ingestion paths and the Event schema', async () => {
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/v1/events'].post).toBeDefined();
    expect(doc.paths['/v1/events/batch'].post).toBeDefined();
    expect(doc.paths['/v1/events'].get).toBeDefined();
    expect(doc.paths['/v1/usage'].get).toBeDefined();
    expect(doc.paths['/v1/events'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Event' });
    const event = doc.components.schemas.Event;
    expect(event.required).toEqual(['event']);
    const text = JSON.stringify(event);
    expect(text).toContain('^[a-z][a-z0-9]{0,29}(\\\\.[a-z][a-z0-9_]{0,29}){1,3}$');
    for (const field of ['event', 'event_id', 'timestamp', 'actor_id', 'email', 'ip', 'metadata', 'password_sha1']) expect(text).toContain(`"${field}"`);
    expect(JSON.stringify(doc.paths['/v1/events'].post.responses)).toContain('202');
    const batch = JSON.stringify(doc.paths['/v1/events/batch'].post.requestBody.content['application/json'].schema);
    expect(batch).toContain('"events"');
    expect(batch).toContain('#/components/schemas/Event');
    // Internal 405 routes are not documented.
    expect(doc.paths['/v1/events'].delete).toBeUndefined();
  });

  it('/docs answers 200 with HTML', async () => {
    const res = await get('/docs');
    const final =
      res.statusCode === 302 ? await get(String(res.headers.location).startsWith('/') ? String(res.headers.location) : `/docs/${res.headers.location}`) : res;
    expect(final.statusCode).toBe(200);
    expect(final.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('unauthenticated endpoints', () => {
  it('name no file path (probes, metrics, OpenAPI, 404s, 401s), even with a data directory and enrichment files on disk', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-paths-'));
    const t = await testApp({ VIGIL_DATA_DIR: dataDir });
    try {
      const answers = await Promise.all(
        [
          '/healthz',
          '/readyz',
          '/metrics',
          '/openapi.json',
          '/docs/json',
          '/no/such/route',
          '/dashboard/nope.js',
          '/dashboard/api/session',
          '/v1/events',
          '/admin/accounts',
        ].map((url) => t.vigil.app.inject({ method: 'GET', url })),
      );
      for (const res of answers) {
        expect(res.body).not.toContain(dataDir);
        expect(res.body).not.toContain(process.cwd());
        // No absolute POSIX path of two or more segments (URL paths such as /v1/events are relative to the service).
        expect(res.body).not.toMatch(/(?:^|["'\s(=])\/(?:home|tmp|var|usr|opt|etc|root|srv|work|data)\//);
      }
      expect(answers[1]?.json()).toEqual({
        status: 'ready',
        storage: t.services.store.kind,
        ...(SCALE_OUT ? { redis: 'ok' } : { redis: 'not configured' }),
        overloaded: false,
      });
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
