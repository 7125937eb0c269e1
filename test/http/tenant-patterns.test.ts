/**
 * Patterns and rules a tenant writes cannot stall or crash the service: each case here is an
 * input that once held every account's requests for seconds or more (or killed the process),
 * sent through the real routes, in both modes. A regression shows as a test that never ends.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectError, roomyApp } from './support.js';

type Account = { id: string; secret: string; publishable: string };

/** Alternating stars force a backtracking matcher to try every split of the text. */
const BACKTRACKING_GLOB = `${'*a'.repeat(45)}Z`;
/** Consecutive stars: one split per star and position for a backtracking matcher. */
const STAR_RUN_GLOB = `${'*'.repeat(60)}Z`;

describe('tenant patterns stay bounded', () => {
  let t: TestApp;
  let pro: Account;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await roomyApp({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: '20' });
    pro = await t.account('pro');
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const call = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    key: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> =>
    t.vigil.app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('matches webhook alert-type globs without backtracking, inside the commit of every alert', async () => {
    const hook = await call('POST', '/v1/webhooks', pro.secret, {
      url: receiver.url,
      filters: { alert_types: [STAR_RUN_GLOB, BACKTRACKING_GLOB, '*scanner*'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const other = await t.account('pro');
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', '/v1/events', pro.secret, { event: 'auth.login.failure', actor_id: `a${i}`, ip: '203.0.113.7', user_agent: 'sqlmap/1.7' });
      expect(res.statusCode, res.body).toBe(202);
      expect((res.json() as { alerts: { type: string }[] }).alerts.map((a) => a.type)).toContain('request.scanner_user_agent');
      // Another account's request is answered in the same stretch.
      expect((await call('POST', '/v1/events', other.secret, { event: 'auth.login.success', actor_id: 'b', ip: '198.51.100.1' })).statusCode).toBe(202);
    }
    // The glob that does match still routes the alert.
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThan(0), { timeout: 15_000, interval: 20 });
    await call('DELETE', `/v1/webhooks/${(hook.json() as { id: string }).id}`, pro.secret);
  });

  it('matches Sigma condition name patterns without backtracking', async () => {
    const rule = (target: string) =>
      ['title: Probe', 'detection:', '  sel_a:', '    cs-method: GET', '  sel_b:', '    cs-method: HEAD', `  condition: 1 of ${target}`].join('\n');
    for (const target of [STAR_RUN_GLOB, BACKTRACKING_GLOB]) {
      const saved = await call('POST', '/v1/threat-models', pro.secret, rule(target), { 'content-type': 'application/yaml' });
      expect(expectError(saved, 400, 'INVALID_THREAT_MODEL').message).toMatch(/matches no search identifier/);
      const tried = await call('POST', '/v1/threat-models/test', pro.secret, { model: { format: 'sigma', rule: rule(target) } });
      expect(expectError(tried, 400, 'INVALID_THREAT_MODEL').message).toMatch(/matches no search identifier/);
    }
    const fine = await call('POST', '/v1/threat-models', pro.secret, { format: 'sigma', rule: rule('sel_*'), enabled: false });
    expect(fine.statusCode, fine.body).toBe(201);
    await call('DELETE', `/v1/threat-models/${(fine.json() as { id: string }).id}`, pro.secret);
  });

  const regexModel = (name: string, patterns: readonly string[]) => ({
    name,
    match: { event: ['custom.*'], where: { any: patterns.map((value) => ({ field: 'metadata.x', op: 'regex', value })) } },
    // Each model of an account raises its own alert type.
    outcome: { alert: `custom.heavy_${name.replace(/\W+/g, '_')}`, severity: 'low' },
  });

  it('refuses a regular expression whose program is over the per-pattern limit, naming it', async () => {
    const res = await call('POST', '/v1/threat-models', pro.secret, regexModel('huge', ['(?:.{1,1000})q1']));
    const body = expectError(res, 400, 'INVALID_THREAT_MODEL');
    expect(body.details?.[0]).toMatchObject({ field: 'match.where.any[0].value' });
    expect(body.details?.[0]?.message).toMatch(/RE2 instructions, over the limit of 2000 per pattern/);
  });

  it('refuses a model and an account whose compiled patterns are over their memory limits, naming the limit', async () => {
    const heavy = (i: number) => `(?:.{1,900})q${i}`;
    const oneModel = await call(
      'POST',
      '/v1/threat-models',
      pro.secret,
      regexModel(
        'too heavy',
        Array.from({ length: 64 }, (_, i) => heavy(i)),
      ),
    );
    expect(expectError(oneModel, 400, 'INVALID_THREAT_MODEL').message).toMatch(/over the limit of 4000 per model/);
    // Many small patterns: few instructions, but each keeps a DFA cache.
    const manySmall = await call(
      'POST',
      '/v1/threat-models',
      pro.secret,
      regexModel(
        'many small',
        Array.from({ length: 64 }, (_, i) => `a${i}[0-9]+b`),
      ),
    );
    expect(expectError(manySmall, 400, 'INVALID_THREAT_MODEL').message).toMatch(/KiB per model/);

    const acct = await t.account('business');
    const saved: string[] = [];
    let refused: LightMyRequestResponse | undefined;
    for (let m = 0; m < 24 && refused === undefined; m++) {
      const res = await call(
        'POST',
        '/v1/threat-models',
        acct.secret,
        regexModel(
          `heavy ${m}`,
          Array.from({ length: 2 }, (_, i) => heavy(m * 2 + i)),
        ),
      );
      if (res.statusCode === 201) saved.push((res.json() as { id: string }).id);
      else refused = res;
    }
    expect(refused, 'the account limit never refused a model').toBeDefined();
    expect(saved.length).toBeGreaterThan(1);
    expect(expectError(refused as LightMyRequestResponse, 400, 'INVALID_THREAT_MODEL').message).toMatch(/MiB per account/);
    // A disabled model keeps nothing compiled, so it is accepted; enabling it is refused.
    const disabled = await call('POST', '/v1/threat-models', acct.secret, { ...regexModel('parked', [heavy(999)]), enabled: false });
    expect(disabled.statusCode, disabled.body).toBe(201);
    // The account's saved models still run: its next event is answered.
    const ev = await call('POST', '/v1/events', acct.secret, { event: 'custom.x.y', metadata: { x: `${'a'.repeat(50)}q0` } });
    expect(ev.statusCode, ev.body).toBe(202);
  });

  it('refuses hostile YAML and conditions with 400, never a crash or a 500', async () => {
    const post = (rule: string) => call('POST', '/v1/threat-models/test', pro.secret, { model: { format: 'sigma', rule } });
    const aliasBomb = [
      'title: bomb',
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
      'detection:',
      '  sel: {a: 1}',
      '  condition: sel',
    ].join('\n');
    expect(expectError(await post(aliasBomb), 400, 'INVALID_THREAT_MODEL').message).toMatch(/alias/i);

    const deepParens = `title: deep\ndetection:\n  sel: {a: 1}\n  condition: ${'('.repeat(5000)}sel${')'.repeat(5000)}\n`;
    expect(expectError(await post(deepParens), 400, 'INVALID_THREAT_MODEL').message).toMatch(/at most 32 deep/);
    const deepNots = `title: deep\ndetection:\n  sel: {a: 1}\n  condition: ${'not '.repeat(5000)}sel\n`;
    expect(expectError(await post(deepNots), 400, 'INVALID_THREAT_MODEL').message).toMatch(/at most 32 deep/);

    // Flow collections nested this deep once ran the YAML parser's stack out and then the process's memory.
    const deepFlow = `title: deep\nx: ${'['.repeat(20_000)}${']'.repeat(20_000)}\ndetection:\n  sel: {a: 1}\n  condition: sel\n`;
    expect(expectError(await post(deepFlow), 400, 'INVALID_THREAT_MODEL').message).toMatch(/nests at most 64/);
    const deepBlock = `title: deep\nx:\n${'- '.repeat(20_000)}y\ndetection:\n  sel: {a: 1}\n  condition: sel\n`;
    expect(expectError(await post(deepBlock), 400, 'INVALID_THREAT_MODEL').message).toMatch(/nests at most 64/);

    // The service is still up for everyone.
    expect((await t.vigil.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('threat-model changes per account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp({ VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE: '3' });
  });
  afterAll(() => t.close());

  it('are bounded per minute, each account on its own', async () => {
    const [a, b] = [await t.account('pro'), await t.account('pro')];
    const model = (name: string) => ({
      name,
      match: { event: ['custom.*'] },
      outcome: { alert: `custom.rated_${name.replace(/\W+/g, '_')}`, severity: 'low' },
    });
    const create = (key: string, name: string) => t.vigil.app.inject({ method: 'POST', url: '/v1/threat-models', headers: bearer(key), payload: model(name) });
    for (let i = 0; i < 3; i++) expect((await create(a.secret, `m${i}`)).statusCode).toBe(201);
    const refused = await create(a.secret, 'one too many');
    expect(expectError(refused, 429, 'RATE_LIMITED').message).toMatch(/at most 3 times a minute/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await create(b.secret, 'other account')).statusCode).toBe(201);
    // Reading is not a change.
    expect((await t.vigil.app.inject({ method: 'GET', url: '/v1/threat-models', headers: bearer(a.secret) })).statusCode).toBe(200);
  });
});
