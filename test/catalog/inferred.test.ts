import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/catalog.js';
import type { InferredType } from '../../src/event/classification.js';
import type { RequestInfo, ValidatedEvent } from '../../src/event/types.js';
import { FIXTURE_INPUT } from './fixture-input.js';

const catalog = buildCatalog(FIXTURE_INPUT);

interface Case {
  readonly name: string;
  readonly request?: RequestInfo;
  readonly actorId?: string;
  readonly email?: string;
  readonly metadata?: Record<string, unknown>;
}
const classify = (c: Case, type = 'api.request') =>
  catalog.classify({
    type,
    occurredAt: 0,
    receivedAt: 0,
    metadata: c.metadata ?? {},
    request: c.request,
    actorId: c.actorId,
    email: c.email,
  } as ValidatedEvent);

const RULES: Record<InferredType, { positive: Case[]; negative: Case[] }> = {
  'auth.failure': {
    positive: [
      { name: '401 on /login', request: { method: 'POST', path: '/login', status: 401 } },
      { name: '403 on /api/v1/Auth/Token, mixed case', request: { path: '/api/v1/Auth/Token', status: 403 } },
      { name: '401 on /oauth/authorize', request: { path: '/oauth/authorize?client=1', status: 401 } },
      { name: '401 on /sign-in', request: { path: '/sign-in', status: 401 } },
      { name: '401 on /session', request: { path: '/users/session', status: 401 } },
    ],
    negative: [
      { name: '401 on a non-auth path', request: { path: '/orders', status: 401 } },
      { name: '200 on /login', request: { path: '/login', status: 200 } },
      { name: 'auth word only in the query', request: { path: '/orders?next=/login', status: 401 } },
      { name: '404 on /login', request: { path: '/login', status: 404 } },
    ],
  },
  'auth.success': {
    positive: [
      { name: '200 on /login with actor', request: { path: '/login', status: 200 }, actorId: 'u1' },
      { name: '200 on /SIGNIN with actor', request: { path: '/SIGNIN', status: 200 }, actorId: 'u1' },
    ],
    negative: [
      { name: 'no actor', request: { path: '/login', status: 200 } },
      { name: '201 on /login', request: { path: '/login', status: 201 }, actorId: 'u1' },
      { name: 'non-auth path', request: { path: '/profile', status: 200 }, actorId: 'u1' },
      { name: 'a logout is not a login', request: { path: '/auth/logout', status: 200 }, actorId: 'u1' },
    ],
  },
  'auth.logout': {
    positive: [
      { name: '/logout', request: { path: '/logout' } },
      { name: '/api/SignOut', request: { path: '/api/SignOut', status: 204 } },
    ],
    negative: [
      { name: '/login', request: { path: '/login', status: 200 } },
      { name: 'logout in the query only', request: { path: '/home?from=/logout' } },
    ],
  },
  'data.export': {
    positive: [
      { name: '/export with rows', request: { path: '/reports/export' }, metadata: { rows: 500 } },
      { name: '/download with size_bytes', request: { path: '/files/download/1' }, metadata: { size_bytes: 1024 } },
      { name: '/export with rowCount', request: { path: '/export' }, metadata: { rowCount: 3 } },
      { name: 'rows sent as an unknown top-level field', request: { path: '/export' }, metadata: { extra: { rows: 3 } } },
    ],
    negative: [
      { name: '/export without volume', request: { path: '/export' }, metadata: { format: 'csv' } },
      { name: 'rows without an export path', request: { path: '/reports' }, metadata: { rows: 10 } },
      { name: 'word that merely contains "rows"', request: { path: '/export' }, metadata: { arrows: 1, browser: 'x' } },
    ],
  },
  'account.create': {
    positive: [
      { name: '/register with email', request: { path: '/register' }, email: 'a@b.com' },
      { name: '/api/Sign-Up with email', request: { path: '/api/Sign-Up' }, email: 'a@b.com' },
      { name: '/signup with email', request: { path: '/signup' }, email: 'a@b.com' },
    ],
    negative: [
      { name: '/register without email', request: { path: '/register' } },
      { name: 'email on another path', request: { path: '/profile' }, email: 'a@b.com' },
    ],
  },
  'account.delete': {
    positive: [
      { name: 'DELETE /users/42', request: { method: 'DELETE', path: '/users/42' } },
      { name: 'delete /api/accounts/7', request: { method: 'delete', path: '/api/accounts/7' } },
    ],
    negative: [
      { name: 'GET /users/42', request: { method: 'GET', path: '/users/42' } },
      { name: 'DELETE /orders/1', request: { method: 'DELETE', path: '/orders/1' } },
    ],
  },
  'role.change': {
    positive: [
      { name: 'role key', metadata: { role: 'admin' } },
      { name: 'new_permissions key', metadata: { new_permissions: ['x'] } },
      { name: 'privilegeLevel key', metadata: { privilegeLevel: 3 } },
      { name: 'role as an unknown top-level field', metadata: { extra: { role: 'admin' } } },
    ],
    negative: [
      { name: 'controller and prole', metadata: { controller: 'x', prole: 1 } },
      { name: 'role nested deeper', metadata: { user: { role: 'admin' } } },
      { name: 'role as a value, not a key', metadata: { field: 'role' } },
    ],
  },
  'mfa.event': {
    positive: [
      { name: 'mfa key', metadata: { mfa: true } },
      { name: '2fa_method', metadata: { '2fa_method': 'sms' } },
      { name: 'totpVerified', metadata: { totpVerified: true } },
      { name: 'otp', metadata: { otp: 'sent' } },
    ],
    negative: [{ name: 'footprint and hotpath', metadata: { footprint: 1, hotpath: 2, topt: 3 } }],
  },
  'password.event': {
    positive: [
      { name: '/password/reset with email', request: { path: '/password/reset' }, email: 'a@b.com' },
      { name: '/account/RESET with email', request: { path: '/account/RESET' }, email: 'a@b.com' },
      { name: '/forgot-password with email', request: { path: '/forgot-password' }, email: 'a@b.com' },
    ],
    negative: [
      { name: 'no email', request: { path: '/password/reset' } },
      { name: 'other path', request: { path: '/profile' }, email: 'a@b.com' },
    ],
  },
  'rate.limited': {
    positive: [{ name: '429', request: { path: '/anything', status: 429 } }],
    negative: [{ name: '503', request: { path: '/anything', status: 503 } }],
  },
};

describe('inferred types', () => {
  for (const [type, { positive, negative }] of Object.entries(RULES) as [InferredType, (typeof RULES)[InferredType]][]) {
    describe(type, () => {
      it.each(positive)('matches: $name', (c) => expect(classify(c).inferred).toContain(type));
      it.each(negative)('does not match: $name', (c) => expect(classify(c).inferred).not.toContain(type));
    });
  }

  it('covers all ten inferred types', () => expect(Object.keys(RULES)).toHaveLength(10));

  it('an event with no request and no metadata infers nothing', () => expect(classify({ name: 'empty' }).inferred).toEqual([]));

  it('custom.* events get no inferred types, even when a pattern matches', () => {
    const c = classify({ name: 'login failure', request: { path: '/login', status: 401 } }, 'custom.http.request');
    expect(c.inferred).toEqual([]);
  });

  it('several rules can match one event', () => {
    const c = classify({ name: 'x', request: { path: '/auth/password/reset', status: 429 }, email: 'a@b.com', metadata: { otp: 1 } });
    expect([...c.inferred].sort()).toEqual(['mfa.event', 'password.event', 'rate.limited']);
  });
});

describe('families and detector dispatch', () => {
  it('an inferred type activates its families and their detectors', () => {
    const plain = classify({ name: 'x', request: { path: '/orders', status: 200 } });
    expect(plain.families.size).toBe(1);
    expect(plain.detectors).not.toContain('brute_force');
    const failure = classify({ name: 'x', request: { path: '/login', status: 401 } });
    expect([...failure.families].sort()).toEqual(['api', 'authentication', 'credential']);
    expect(failure.detectors).toContain('brute_force');
    expect(failure.detectors).toContain('api_abuse');
  });

  it('generic detectors run on every event; custom.* gets only them', () => {
    const custom = classify({ name: 'x' }, 'custom.cart.checkout');
    expect([...custom.detectors].sort()).toEqual(['request_scanner', 'threat_intel']);
    expect(custom.families.size).toBe(0);
    const host = classify({ name: 'x' }, 'server.log.cleared');
    expect(host.detectors).toEqual(expect.arrayContaining(['threat_intel', 'request_scanner', 'host_integrity']));
    expect(host.detectors).not.toContain('brute_force');
  });

  it('auth.login.failure reaches brute force, spray and distributed detectors, not host ones', () => {
    const c = classify({ name: 'x' }, 'auth.login.failure');
    expect(c.detectors).toEqual(expect.arrayContaining(['brute_force', 'credential_spray', 'distributed_attack']));
    expect(c.detectors).not.toContain('ssh_brute_force');
    expect(c.detectors).not.toContain('bulk_export');
  });

  it('each detector appears once, and the lists are shared between events of one shape', () => {
    const a = classify({ name: 'x' }, 'auth.login.success');
    const b = classify({ name: 'x' }, 'auth.login.success');
    expect(new Set(a.detectors).size).toBe(a.detectors.length);
    expect(a.detectors).toBe(b.detectors);
    expect(a.families).toBe(b.families);
  });

  it('rejects a detector with an unknown family', () => {
    const bad = { ...FIXTURE_INPUT, detectors: [...FIXTURE_INPUT.detectors, { name: 'x', families: ['nope' as never], description: '', alertTypes: [] }] };
    expect(() => buildCatalog(bad)).toThrow(/unknown family "nope"/);
  });
});

describe('catalog document', () => {
  const doc = catalog.describe() as Record<string, any>;
  it('lists inferred types with triggers and families, families, detectors, alert types, kill chains', () => {
    expect(doc.inferred_types).toHaveLength(10);
    expect(doc.inferred_types[0]).toMatchObject({ type: 'auth.failure', tag: 'inferred:auth.failure', families: ['authentication', 'credential'] });
    expect(doc.inferred_types.every((t: { trigger: string }) => t.trigger.length > 10)).toBe(true);
    expect(doc.families).toHaveLength(10);
    expect(doc.families.find((f: { name: string }) => f.name === 'host').detectors).toContain('ssh_brute_force');
    expect(doc.detectors).toHaveLength(FIXTURE_INPUT.detectors.length);
    expect(doc.alert_types[0]).toEqual({
      type: 'auth.brute_force.account',
      detector: 'brute_force',
      severity: 'high',
      points: 35,
      mitre: ['T1110.001'],
      description: 'Many failures for one actor.',
      decision: null,
      standing: false,
    });
    expect(doc.kill_chains[0]).toMatchObject({ type: 'chain.account_takeover', subject: 'actor', window_ms: 3_600_000 });
    expect(doc.custom.detectors).toEqual(['threat_intel', 'request_scanner']);
  });

  it('is JSON-serialisable', () => expect(JSON.parse(JSON.stringify(doc)).event_types).toHaveLength(98));
});
