import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/util/ids.js';
import { ADMIN_TOKEN, bearer, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { connectTestRedis, describeWithRedis, REDIS_URL } from '../limits/redis-helper.js';
import { expectError, roomyApp } from './support.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('/v1/threat-models', () => {
  let t: TestApp;
  let pro: { id: string; secret: string; publishable: string };
  let other: { id: string; secret: string; publishable: string };

  beforeAll(async () => {
    t = await roomyApp();
    pro = await t.account('pro');
    other = await t.account('business');
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, key: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.vigil.app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = async (key: string, model: unknown) => {
    const res = await call('POST', '/v1/threat-models', key, model);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; version: number };
  };
  const send = async (key: string, event: Record<string, unknown>) => {
    const res = await call('POST', '/v1/events', key, event);
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as {
      id: string;
      alerts: { id: string; type: string; severity: string }[];
      risk: { score: number; breakdown: { source: string; points: number }[] };
      tags: string[];
    };
  };
  const alertTypes = (r: { alerts: { type: string }[] }) => r.alerts.map((a) => a.type);
  const at = (ms: number) => new Date(T0 + ms).toISOString();

  it('answers 403 PLAN_UPGRADE_REQUIRED on Free and Starter, and 403 FORBIDDEN to a publishable key', async () => {
    for (const plan of ['free', 'starter']) {
      const acct = await t.account(plan);
      expectError(await call('GET', '/v1/threat-models', acct.secret), 403, 'PLAN_UPGRADE_REQUIRED');
      expectError(await call('POST', '/v1/threat-models', acct.secret, { name: 'x' }), 403, 'PLAN_UPGRADE_REQUIRED');
      expectError(await call('POST', '/v1/threat-models/test', acct.secret, { id: 'tm_x' }), 403, 'PLAN_UPGRADE_REQUIRED');
    }
    expectError(await call('GET', '/v1/threat-models', pro.publishable), 403, 'FORBIDDEN');
    expect((await call('GET', '/v1/threat-models', pro.secret)).statusCode).toBe(200);
  });

  it('refuses an invalid model with the exact path and problem of each error', async () => {
    const res = await call('POST', '/v1/threat-models', pro.secret, {
      name: 'bad',
      match: {
        event: 'custom.*',
        where: {
          all: [
            { field: 'metadata.cmd', op: 'regex', value: '(a)\\1' },
            { field: 'metadata.n', op: 'between', value: 3 },
            { field: 'nickname', op: 'equals', value: 'x' },
            { field: 'metadata.p', op: 'contains', value: 'x'.repeat(600) },
            { field: 'ip', op: 'cidr', value: ['10.0.0.0/8', '10.0.0.0/99'] },
          ],
        },
      },
      threshold: { count: 0, window_seconds: 60 },
      outcome: { alert: 'brute_force', severity: 'urgent' },
      colour: 'red',
    });
    const body = expectError(res, 400, 'INVALID_THREAT_MODEL');
    const byField = Object.fromEntries((body.details ?? []).map((d) => [d.field, d.message]));
    expect(byField['match.where.all[0].value']).toMatch(/RE2/);
    expect(byField['match.where.all[1].op']).toMatch(/must be one of/);
    expect(byField['match.where.all[2].field']).toMatch(/unknown field "nickname"/);
    expect(byField['match.where.all[3].value']).toMatch(/at most 512 characters/);
    expect(byField['match.where.all[4].value[1]']).toMatch(/not a CIDR/);
    expect(byField['threshold.count']).toMatch(/whole number from 1/);
    expect(byField['outcome.alert']).toMatch(/custom\./);
    expect(byField['outcome.severity']).toMatch(/low, medium, high, critical/);
    expect(byField.colour).toMatch(/unknown field/);
    expect((await call('GET', '/v1/threat-models', pro.secret)).json().data).toHaveLength(0);
  });

  it('raises the alert, its points and tags in the same 202, and records the model version on the alert', async () => {
    const model = await create(pro.secret, {
      name: 'Large export',
      match: {
        event: 'custom.export.*',
        where: {
          all: [
            { field: 'metadata.rows', op: 'gt', value: 1000 },
            { field: 'metadata.format', op: 'in', value: ['csv', 'xlsx'] },
          ],
        },
      },
      outcome: { alert: 'custom.large_export', severity: 'high', points: 42, tags: ['exfil'] },
    });
    expect(model.version).toBe(1);
    const quiet = await send(pro.secret, { event: 'custom.export.users', actor_id: 'u1', metadata: { rows: 10, format: 'csv' } });
    expect(alertTypes(quiet)).toEqual([]);
    const hit = await send(pro.secret, { event: 'custom.export.users', actor_id: 'u1', metadata: { rows: 5000, format: 'csv' } });
    expect(alertTypes(hit)).toEqual(['custom.large_export']);
    expect(hit.alerts[0]?.severity).toBe('high');
    expect(hit.risk.breakdown).toContainEqual({ source: 'alert.custom.large_export', points: 42 });
    expect(hit.tags).toContain('exfil');
    const alert = (await call('GET', `/v1/alerts/${hit.alerts[0]?.id}`, pro.secret)).json();
    expect(alert.details.threat_model).toEqual({ id: model.id, version: 1, name: 'Large export' });
    expect(alert.event_ids).toEqual([hit.id]);

    // A new version: the next alert records it.
    const patched = await call('PATCH', `/v1/threat-models/${model.id}`, pro.secret, { outcome: { alert: 'custom.large_export', severity: 'critical' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ version: 2, outcome: { severity: 'critical', points: 50 } });
    const versions = (await call('GET', `/v1/threat-models/${model.id}/versions`, pro.secret)).json().data;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions[1].definition.outcome.severity).toBe('high');

    // Disabled: no alert.
    await call('PATCH', `/v1/threat-models/${model.id}`, pro.secret, { enabled: false });
    expect(alertTypes(await send(pro.secret, { event: 'custom.export.users', actor_id: 'u9', metadata: { rows: 5000, format: 'csv' } }))).toEqual([]);
    await call('PATCH', `/v1/threat-models/${model.id}`, pro.secret, { enabled: true });
    const again = await send(pro.secret, { event: 'custom.export.users', actor_id: 'u8', metadata: { rows: 5000, format: 'xlsx' } });
    const row = (await call('GET', `/v1/alerts/${again.alerts[0]?.id}`, pro.secret)).json();
    expect(row.details.threat_model.version).toBe(4);
    expect(row.severity).toBe('critical');

    expect((await call('DELETE', `/v1/threat-models/${model.id}`, pro.secret)).statusCode).toBe(204);
    expectError(await call('GET', `/v1/threat-models/${model.id}`, pro.secret), 404, 'NOT_FOUND');
    expect(alertTypes(await send(pro.secret, { event: 'custom.export.users', actor_id: 'u7', metadata: { rows: 5000, format: 'csv' } }))).toEqual([]);
  });

  it('reads enrichment by its snake_case names, and by the older camelCase ones', async () => {
    const snake = await create(pro.secret, {
      name: 'Scanner (snake_case path)',
      match: { event: 'custom.ua.check', where: { field: 'enrichment.user_agent.scanner', op: 'equals', value: 'sqlmap' } },
      outcome: { alert: 'custom.ua_snake', severity: 'low' },
    });
    const camel = await create(pro.secret, {
      name: 'Scanner (camelCase path)',
      match: { event: 'custom.ua.check', where: { field: 'enrichment.userAgent.scanner', op: 'equals', value: 'sqlmap' } },
      outcome: { alert: 'custom.ua_camel', severity: 'low' },
    });
    const hit = await send(pro.secret, { event: 'custom.ua.check', actor_id: 'ua', user_agent: 'sqlmap/1.7.2#stable (https://sqlmap.org)' });
    const custom = (r: { alerts: { type: string }[] }) => alertTypes(r).filter((type) => type.startsWith('custom.'));
    expect(custom(hit).sort()).toEqual(['custom.ua_camel', 'custom.ua_snake']);
    expect(custom(await send(pro.secret, { event: 'custom.ua.check', actor_id: 'ua', user_agent: 'curl/8.4.0' }))).toEqual([]);
    for (const model of [snake, camel]) await call('DELETE', `/v1/threat-models/${model.id}`, pro.secret);
  });

  it('counts a threshold per group in an event-time window, deduplicates, and reopens after the alert is resolved', async () => {
    const model = await create(pro.secret, {
      name: 'Repeated refunds',
      match: { event: 'custom.refund', where: { field: 'metadata.amount', op: 'gte', value: 100 } },
      threshold: { count: 3, group_by: 'actor_id', window_seconds: 600 },
      outcome: { alert: 'custom.refund_burst', severity: 'medium' },
    });
    const refund = (actor: string, ms: number, amount = 150) =>
      send(pro.secret, { event: 'custom.refund', actor_id: actor, timestamp: at(ms), metadata: { amount } });
    expect(alertTypes(await refund('a', 0))).toEqual([]);
    expect(alertTypes(await refund('b', 1_000))).toEqual([]);
    expect(alertTypes(await refund('a', 2_000, 5))).toEqual([]); // below the condition: not counted
    expect(alertTypes(await refund('a', 700_000))).toEqual([]); // the first left the 10-minute window
    expect(alertTypes(await refund('a', 701_000))).toEqual([]);
    const third = await refund('a', 702_000);
    expect(alertTypes(third)).toEqual(['custom.refund_burst']);
    const fourth = await refund('a', 703_000);
    expect(fourth.alerts[0]?.id).toBe(third.alerts[0]?.id);
    const alert = (await call('GET', `/v1/alerts/${third.alerts[0]?.id}`, pro.secret)).json();
    expect(alert).toMatchObject({ subject: 'actor:a', count: 2 });
    expect(alert.details.group).toEqual({ actor_id: 'a' });

    expect((await call('PATCH', `/v1/alerts/${third.alerts[0]?.id}`, pro.secret, { status: 'resolved' })).statusCode).toBe(200);
    const fifth = await refund('a', 704_000);
    expect(alertTypes(fifth)).toEqual(['custom.refund_burst']);
    expect(fifth.alerts[0]?.id).not.toBe(third.alerts[0]?.id);
    await call('DELETE', `/v1/threat-models/${model.id}`, pro.secret);
  });

  it('counts distinct values and fires a sequence only in order within its window', async () => {
    const distinct = await create(pro.secret, {
      name: 'One card, many accounts',
      match: { event: 'custom.payment' },
      threshold: { count: 3, distinct: 'actor_id', group_by: ['metadata.card'], window_seconds: 3600 },
      outcome: { alert: 'custom.shared_card', severity: 'high' },
    });
    const pay = (actor: string, ms: number) => send(pro.secret, { event: 'custom.payment', actor_id: actor, timestamp: at(ms), metadata: { card: 'c1' } });
    expect(alertTypes(await pay('x', 0))).toEqual([]);
    expect(alertTypes(await pay('x', 10))).toEqual([]);
    expect(alertTypes(await pay('y', 20))).toEqual([]);
    expect(alertTypes(await pay('z', 30))).toEqual(['custom.shared_card']);

    const sequence = await create(pro.secret, {
      name: 'Password reset then payout change',
      match: { event: 'custom.password.reset' },
      sequence: { then: [{ event: 'custom.payout.change' }], group_by: 'actor_id', window_seconds: 300 },
      outcome: { alert: 'custom.reset_then_payout', severity: 'critical' },
    });
    const ev = (type: string, actor: string, ms: number) => send(pro.secret, { event: type, actor_id: actor, timestamp: at(ms) });
    expect(alertTypes(await ev('custom.payout.change', 's1', 0))).toEqual([]); // B before A
    expect(alertTypes(await ev('custom.password.reset', 's1', 1_000))).toEqual([]);
    expect(alertTypes(await ev('custom.payout.change', 's2', 2_000))).toEqual([]); // another group
    expect(alertTypes(await ev('custom.payout.change', 's1', 2_000))).toEqual(['custom.reset_then_payout']);
    expect(alertTypes(await ev('custom.password.reset', 's3', 0))).toEqual([]);
    expect(alertTypes(await ev('custom.payout.change', 's3', 400_000))).toEqual([]); // outside the window
    for (const m of [distinct, sequence]) await call('DELETE', `/v1/threat-models/${m.id}`, pro.secret);
  });

  it('accepts a Sigma rule as YAML, shows the translation, and refuses an unsupported construct by name', async () => {
    const yaml = [
      'title: Admin path probe',
      'level: high',
      'tags: [attack.discovery]',
      'logsource: {category: webserver}',
      'detection:',
      '  selection:',
      "    cs-uri-stem|startswith: '/admin'",
      '    cs-method: [GET, HEAD]',
      '  filter:',
      '    c-ip|cidr: 10.0.0.0/8',
      '  condition: selection and not filter',
    ].join('\n');
    const res = await call('POST', '/v1/threat-models', pro.secret, yaml, { 'content-type': 'application/yaml' });
    expect(res.statusCode, res.body).toBe(201);
    const model = res.json();
    expect(model).toMatchObject({ format: 'sigma', sigma: yaml, name: 'Admin path probe', outcome: { alert: 'custom.admin_path_probe', severity: 'high' } });
    const probe = (ip: string, path: string, method = 'get') => send(pro.secret, { event: 'custom.http.request', ip, request: { method, path, status: 404 } });
    expect(alertTypes(await probe('203.0.113.9', '/ADMIN/users'))).toEqual(['custom.admin_path_probe']);
    expect(alertTypes(await probe('10.1.2.3', '/admin'))).toEqual([]);
    expect(alertTypes(await probe('203.0.113.10', '/admin', 'post'))).toEqual([]);
    await call('DELETE', `/v1/threat-models/${model.id}`, pro.secret);

    const refused = await call('POST', '/v1/threat-models', pro.secret, {
      format: 'sigma',
      rule: 'title: x\ndetection:\n  sel:\n    CommandLine|expand: "%admins%"\n  condition: sel',
    });
    const body = expectError(refused, 400, 'INVALID_THREAT_MODEL');
    expect(body.details?.[0]).toMatchObject({ field: 'rule.detection.sel.CommandLine|expand' });
    expect(body.details?.[0]?.message).toMatch(/`expand`/);
    const aggregation = await call('POST', '/v1/threat-models', pro.secret, 'title: x\ndetection:\n  sel: {a: 1}\n  condition: sel | count() > 5', {
      'content-type': 'application/yaml',
    });
    expect(expectError(aggregation, 400, 'INVALID_THREAT_MODEL').message).toMatch(/aggregation `\| count\(\) > 5`/);
    // YAML stays unsupported on other routes.
    expectError(await call('POST', '/v1/events', pro.secret, 'event: custom.x', { 'content-type': 'application/yaml' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('gives each model of an account its own alert type: long Sigma titles differ by a hash, a repeated one by a number, a chosen one is refused', async () => {
    const acct = await t.account('pro');
    const sigma = (title: string) =>
      call('POST', '/v1/threat-models', acct.secret, `title: ${title}\nlevel: low\ndetection:\n  s:\n    Cmd: x\n  condition: s`, {
        'content-type': 'application/yaml',
      });
    const prefix = 'Suspicious PowerShell download cradle through an encoded command line';
    const first = (await sigma(`${prefix} (variant one)`)).json() as { outcome: { alert: string } };
    const second = (await sigma(`${prefix} (variant two)`)).json() as { outcome: { alert: string } };
    expect(first.outcome.alert).toMatch(/^custom\.suspicious_powershell_download_cradle_t_[0-9a-f]{8}$/);
    expect(second.outcome.alert).toMatch(/^custom\.suspicious_powershell_download_cradle_t_[0-9a-f]{8}$/);
    expect(second.outcome.alert).not.toBe(first.outcome.alert);
    const short = (await sigma('Whoami run')).json() as { id: string; outcome: { alert: string } };
    const again = (await sigma('Whoami run')).json() as { outcome: { alert: string } };
    expect([short.outcome.alert, again.outcome.alert]).toEqual(['custom.whoami_run', 'custom.whoami_run_2']);

    const native = { name: 'Mine', match: { event: 'custom.*' }, outcome: { alert: 'custom.whoami_run', severity: 'low' } };
    const refused = expectError(await call('POST', '/v1/threat-models', acct.secret, native), 400, 'INVALID_THREAT_MODEL');
    expect(refused.details?.[0]).toMatchObject({ field: 'outcome.alert' });
    expect(refused.details?.[0]?.message).toContain(`already raised by threat model ${short.id} ("Whoami run")`);
    // The same type in another account is that account's own.
    const elsewhere = await t.account('business');
    expect((await call('POST', '/v1/threat-models', elsewhere.secret, native)).statusCode).toBe(201);
    // A model keeps its own type across versions.
    const renamed = await call('PATCH', `/v1/threat-models/${short.id}`, acct.secret, { name: 'Whoami, renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ version: 2, outcome: { alert: 'custom.whoami_run' } });
  });

  it('maps Sigma fields through the account overrides', async () => {
    const put = await call('PUT', '/v1/threat-models/sigma-fields', pro.secret, { fields: { Tenant: 'metadata.org.id' } });
    expect(put.statusCode, put.body).toBe(200);
    const res = await call('POST', '/v1/threat-models', pro.secret, {
      format: 'sigma',
      rule: { title: 'Tenant t9', detection: { s: { Tenant: 't9' }, condition: 's' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().match.where).toEqual({ field: 'metadata.org.id', op: 'equals', value: 't9', ignore_case: true });
    expect(alertTypes(await send(pro.secret, { event: 'custom.x', metadata: { org: { id: 'T9' } } }))).toEqual(['custom.tenant_t9']);
    await call('DELETE', `/v1/threat-models/${res.json().id}`, pro.secret);
    expectError(await call('PUT', '/v1/threat-models/sigma-fields', pro.secret, { fields: { X: 'nowhere' } }), 400, 'INVALID_REQUEST');
  });

  it('dry-runs a model over stored events without writing alerts or state', async () => {
    const acct = await t.account('pro');
    for (let i = 0; i < 5; i++) await send(acct.secret, { event: 'custom.login.fail', actor_id: 'd1', timestamp: at(i * 1000), metadata: { reason: 'otp' } });
    await send(acct.secret, { event: 'custom.login.fail', actor_id: 'd2', timestamp: at(6000), metadata: { reason: 'otp' } });
    const model = {
      name: 'OTP failures',
      match: { event: 'custom.login.*', where: { field: 'metadata.reason', op: 'equals', value: 'OTP', ignore_case: true } },
      threshold: { count: 3, group_by: 'actor_id', window_seconds: 60 },
      outcome: { alert: 'custom.otp_failures', severity: 'medium' },
    };
    const res = await call('POST', '/v1/threat-models/test', acct.secret, { model, from: at(-60_000), to: at(60_000) });
    expect(res.statusCode, res.body).toBe(200);
    const dry = res.json();
    expect(dry).toMatchObject({ scanned: 6, matched: 6, alerts_raised: 1, truncated: null });
    expect(dry.alerts).toEqual([expect.objectContaining({ type: 'custom.otp_failures', subject: 'actor:d1', count: 3 })]);
    expect(dry.events).toHaveLength(6);
    expect((await call('GET', '/v1/alerts', acct.secret)).json().data).toEqual([]);

    // Saved and enabled afterwards: its window starts empty (the dry run left no state behind).
    const saved = await create(acct.secret, model);
    expect(alertTypes(await send(acct.secret, { event: 'custom.login.fail', actor_id: 'd1', timestamp: at(7000), metadata: { reason: 'otp' } }))).toEqual([]);
    const byId = (await call('POST', '/v1/threat-models/test', acct.secret, { id: saved.id, from: at(-60_000), to: at(60_000) })).json();
    expect(byId).toMatchObject({ scanned: 7, matched: 7, alerts_raised: 1 });
    expectError(await call('POST', '/v1/threat-models/test', acct.secret, { model: { name: 'x' } }), 400, 'INVALID_THREAT_MODEL');
  });

  it('dry-runs over events stored by earlier versions with camelCase enrichment, by the snake_case path', async () => {
    const acct = await t.account('pro');
    const id = newId('evt', T0);
    const doc = { id, event: 'custom.legacy.ua', actor_id: 'lg', enrichment: { userAgent: { scanner: 'sqlmap', automated: true, family: 'Other' } } };
    await t.services.store.commit({
      events: [
        {
          id,
          accountId: acct.id,
          type: 'custom.legacy.ua',
          eventId: null,
          occurredAt: T0,
          receivedAt: T0,
          actorId: 'lg',
          ip: null,
          riskScore: 0,
          tags: [],
          doc,
        },
      ],
      alerts: [],
      usage: [],
      idempotency: [],
    });
    const model = {
      name: 'Legacy scanner',
      match: { event: 'custom.legacy.*', where: { field: 'enrichment.user_agent.scanner', op: 'equals', value: 'sqlmap' } },
      outcome: { alert: 'custom.legacy_scanner', severity: 'low' },
    };
    const res = await call('POST', '/v1/threat-models/test', acct.secret, { model, from: at(-60_000), to: at(60_000) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ scanned: 1, matched: 1 });
  });

  it('keeps models and their state apart between accounts', async () => {
    const model = await create(pro.secret, {
      name: 'Burst',
      match: { event: 'custom.iso' },
      threshold: { count: 2, window_seconds: 600 },
      outcome: { alert: 'custom.iso_burst', severity: 'low' },
    });
    expectError(await call('GET', `/v1/threat-models/${model.id}`, other.secret), 404, 'NOT_FOUND');
    expectError(await call('PATCH', `/v1/threat-models/${model.id}`, other.secret, { enabled: false }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/v1/threat-models/${model.id}`, other.secret), 404, 'NOT_FOUND');
    expectError(await call('GET', `/v1/threat-models/${model.id}/versions`, other.secret), 404, 'NOT_FOUND');
    expect((await call('GET', '/v1/threat-models', other.secret)).json().data).toEqual([]);
    // The other account's events neither fire the model nor fill its window.
    expect(alertTypes(await send(other.secret, { event: 'custom.iso' }))).toEqual([]);
    expect(alertTypes(await send(other.secret, { event: 'custom.iso' }))).toEqual([]);
    expect(alertTypes(await send(pro.secret, { event: 'custom.iso' }))).toEqual([]);
    expect(alertTypes(await send(pro.secret, { event: 'custom.iso' }))).toEqual(['custom.iso_burst']);
    // The same model saved by the other account counts its own events only.
    await create(other.secret, {
      name: 'Burst',
      match: { event: 'custom.iso' },
      threshold: { count: 2, window_seconds: 600 },
      outcome: { alert: 'custom.iso_burst', severity: 'low' },
    });
    expect(alertTypes(await send(other.secret, { event: 'custom.iso' }))).toEqual([]);
    expect(alertTypes(await send(other.secret, { event: 'custom.iso' }))).toEqual(['custom.iso_burst']);
  });

  it('runs user regexes on the linear-time engine: a catastrophic pattern answers at once, lookaround is refused', async () => {
    const acct = await t.account('pro');
    // On a backtracking engine (a+)+$ against 40 a's and a b takes 2^40 steps; this test would time out.
    const model = await create(acct.secret, {
      name: 'Nested quantifier',
      match: { event: 'custom.re', where: { field: 'metadata.s', op: 'regex', value: '(a+)+$' } },
      outcome: { alert: 'custom.nested', severity: 'low' },
    });
    expect(alertTypes(await send(acct.secret, { event: 'custom.re', metadata: { s: `${'a'.repeat(40)}!` } }))).toEqual([]);
    expect(alertTypes(await send(acct.secret, { event: 'custom.re', metadata: { s: 'aaaa' } }))).toEqual(['custom.nested']);
    const lookahead = await call('PUT', `/v1/threat-models/${model.id}`, acct.secret, {
      name: 'Lookahead',
      match: { event: 'custom.re', where: { field: 'metadata.s', op: 'regex', value: 'a(?=b)' } },
      outcome: { alert: 'custom.nested', severity: 'low' },
    });
    expect(expectError(lookahead, 400, 'INVALID_THREAT_MODEL').details?.[0]?.field).toBe('match.where.value');
    // Replaced by a Sigma rule: a new version in the Sigma format.
    const sigma = await call('PUT', `/v1/threat-models/${model.id}`, acct.secret, "title: Nested\ndetection:\n  s:\n    s|re: '^(a|aa)+$'\n  condition: s", {
      'content-type': 'application/yaml',
    });
    expect(sigma.statusCode, sigma.body).toBe(200);
    expect(sigma.json()).toMatchObject({ version: 2, format: 'sigma', match: { where: { field: 'metadata.s', op: 'regex', value: '^(a|aa)+$' } } });
    expect(alertTypes(await send(acct.secret, { event: 'custom.re', metadata: { s: 'a'.repeat(5000) } }))).toEqual(['custom.nested']);
  });

  it('stops evaluating the models of an account that moves to a plan without them', async () => {
    const acct = await t.account('pro');
    await create(acct.secret, { name: 'Any', match: { event: 'custom.plan' }, outcome: { alert: 'custom.plan_hit', severity: 'low' } });
    expect(alertTypes(await send(acct.secret, { event: 'custom.plan' }))).toEqual(['custom.plan_hit']);
    const downgrade = await t.vigil.app.inject({
      method: 'PATCH',
      url: `/admin/accounts/${acct.id}`,
      headers: bearer(ADMIN_TOKEN),
      payload: { plan: 'starter' },
    });
    expect(downgrade.statusCode, downgrade.body).toBe(200);
    expect(alertTypes(await send(acct.secret, { event: 'custom.plan' }))).toEqual([]);
    expectError(await call('GET', '/v1/threat-models', acct.secret), 403, 'PLAN_UPGRADE_REQUIRED');
  });

  it('evaluates the events of a batch in order', async () => {
    const acct = await t.account('business');
    await create(acct.secret, {
      name: 'Three in a batch',
      match: { event: 'custom.b' },
      threshold: { count: 3, group_by: 'actor_id', window_seconds: 60 },
      outcome: { alert: 'custom.batch_three', severity: 'low' },
    });
    const res = await call('POST', '/v1/events/batch', acct.secret, {
      events: [1, 2, 3, 4].map((i) => ({ event: 'custom.b', actor_id: 'q', timestamp: at(i) })),
    });
    expect(res.statusCode, res.body).toBe(202);
    const results = res.json().results as { alerts: { id: string; type: string }[] }[];
    expect(results.map((r) => r.alerts.map((a) => a.type))).toEqual([[], [], ['custom.batch_three'], ['custom.batch_three']]);
    expect(results[3]?.alerts[0]?.id).toBe(results[2]?.alerts[0]?.id);
  });
});

const redis = await connectTestRedis('http-threat-models');

describeWithRedis('threat models on two instances sharing the store and Redis', redis, ({ prefix }) => {
  let a: TestApp;
  let b: TestApp;
  let acct: { id: string; secret: string; publishable: string };

  beforeAll(async () => {
    const env = { VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix };
    a = await roomyApp(env);
    b = await roomyApp(env, { store: a.services.store, clock: a.clock });
    for (const t of [a, b]) await until(() => t.services.redisHealth?.degraded === false, 'Redis connected');
    a.clock.set(T0);
    acct = await a.account('pro');
  });
  // b shares a's store: close b's app only and leave the store to a.
  afterAll(async () => {
    await b?.vigil.close();
    await a?.close();
  });

  const call = (t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.vigil.app.inject({ method, url, headers: bearer(acct.secret), ...(payload === undefined ? {} : { payload: payload as object }) });
  const alertsOn = async (t: TestApp, event: Record<string, unknown>) => {
    const res = await call(t, 'POST', '/v1/events', event);
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { alerts: { id: string; type: string; severity: string }[] }).alerts;
  };
  const model = (severity: string, enabled = true) => ({
    name: 'Admin export',
    enabled,
    match: { event: 'custom.admin.export' },
    outcome: { alert: 'custom.admin_export', severity },
  });

  it("puts a model saved through one instance in force on the other's very next event", async () => {
    // b has looked up the account's models (none) before a saves one.
    expect(await alertsOn(b, { event: 'custom.admin.export', actor_id: 'x1' })).toEqual([]);
    const created = await call(a, 'POST', '/v1/threat-models', model('low'));
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    expect((await alertsOn(b, { event: 'custom.admin.export', actor_id: 'x2' })).map((x) => x.severity)).toEqual(['low']);

    expect((await call(a, 'PUT', `/v1/threat-models/${id}`, model('high'))).statusCode).toBe(200);
    expect((await alertsOn(b, { event: 'custom.admin.export', actor_id: 'x3' })).map((x) => x.severity)).toEqual(['high']);

    expect((await call(a, 'PATCH', `/v1/threat-models/${id}`, { enabled: false })).statusCode).toBe(200);
    expect(await alertsOn(b, { event: 'custom.admin.export', actor_id: 'x4' })).toEqual([]);

    expect((await call(b, 'PATCH', `/v1/threat-models/${id}`, { enabled: true })).statusCode).toBe(200);
    expect((await alertsOn(a, { event: 'custom.admin.export', actor_id: 'x5' })).map((x) => x.severity)).toEqual(['high']);

    expect((await call(a, 'DELETE', `/v1/threat-models/${id}`)).statusCode).toBe(204);
    expect(await alertsOn(b, { event: 'custom.admin.export', actor_id: 'x6' })).toEqual([]);
  });

  it('counts the events sent to both instances in one threshold window', async () => {
    const created = await call(a, 'POST', '/v1/threat-models', {
      name: 'Shared burst',
      match: { event: 'custom.shared' },
      threshold: { count: 4, group_by: 'actor_id', window_seconds: 600 },
      outcome: { alert: 'custom.shared_burst', severity: 'medium' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const send = (t: TestApp, i: number) => alertsOn(t, { event: 'custom.shared', actor_id: 's1', timestamp: new Date(T0 + i * 1000).toISOString() });
    expect(await send(a, 1)).toEqual([]);
    expect(await send(b, 2)).toEqual([]);
    expect(await send(a, 3)).toEqual([]);
    const fourth = await send(b, 4);
    expect(fourth.map((x) => x.type)).toEqual(['custom.shared_burst']);
    // The fifth, on the other instance, updates the same alert.
    const fifth = await send(a, 5);
    expect(fifth.map((x) => x.id)).toEqual(fourth.map((x) => x.id));
  });
});
