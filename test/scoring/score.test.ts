import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Classification, InferredType, Severity } from '../../src/event/classification.js';
import type { AlertHit } from '../../src/event/alert.js';
import type { Enrichment, InjectionClass } from '../../src/event/enrichment.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import type { AccountContext } from '../../src/event/account.js';
import { createScoreStage } from '../../src/pipeline/score.js';
import type { DetectedEvent } from '../../src/event/types.js';
import { validateRiskSettings } from '../../src/scoring/thresholds.js';

const ctx = (settings: Record<string, unknown> = {}): AccountContext => ({
  account: { id: 'acc_1', name: 'Acme', plan: 'pro', createdAt: 0, settings },
  plan: DEFAULT_PLANS.pro!,
  keyId: 'key_1',
  keyKind: 'secret',
  principal: { kind: 'key', keyId: 'key_1', keyPrefix: 'vgl_sk_test', scopes: ['ingest', 'read', 'manage'] },
});

const classification = (baseScore: number, inferred: InferredType[] = []): Classification => ({
  predefined: true,
  baseScore,
  inferred,
  families: new Set(),
  detectors: [],
});
const alert = (type: string, severity: Severity, detector = 'brute_force'): AlertHit => ({
  id: `al_${type}`,
  type,
  severity,
  subject: 'actor:u1',
  opened: true,
  detector,
});

function event(opts: { type?: string; base?: number; inferred?: InferredType[]; enrichment?: Enrichment; alerts?: AlertHit[] }): DetectedEvent {
  return {
    type: opts.type ?? 'api.request',
    occurredAt: 0,
    receivedAt: 0,
    metadata: {},
    classification: classification(opts.base ?? 0, opts.inferred),
    enrichment: opts.enrichment ?? {},
    alerts: opts.alerts ?? [],
  };
}

const score = createScoreStage();
const clean = { torExit: false, blocklists: [], hostingAsn: false };
const sum = (lines: readonly { points: number }[]) => lines.reduce((n, l) => n + l.points, 0);

describe('composite score', () => {
  it('is the base score alone for a plain event', () => {
    const r = score(event({ type: 'auth.mfa.disabled', base: 30 }), ctx());
    expect(r).toEqual({ score: 30, level: 'medium', action: 'allow', breakdown: [{ source: 'base', points: 30 }] });
  });

  it('scores 0 with an empty breakdown when nothing applies', () => {
    expect(score(event({}), ctx())).toEqual({ score: 0, level: 'low', action: 'allow', breakdown: [] });
  });

  it('adds Tor +25 and blocklist +30 even on a base-0 event', () => {
    const r = score(
      event({ type: 'custom.checkout', enrichment: { threat: { torExit: true, blocklists: ['firehol_level1', 'blocklist-x'], hostingAsn: false } } }),
      ctx(),
    );
    expect(r.breakdown).toEqual([
      { source: 'threat_intel.tor_exit', points: 25 },
      { source: 'threat_intel.blocklist', points: 30 },
    ]);
    expect(r.score).toBe(55);
    expect(r.level).toBe('high');
    expect(r.action).toBe('challenge');
  });

  it('adds a hosting ASN +10 on auth events only', () => {
    const hosting = { threat: { ...clean, hostingAsn: true } };
    expect(score(event({ type: 'auth.login.success', enrichment: hosting }), ctx()).breakdown).toEqual([{ source: 'threat_intel.hosting_asn', points: 10 }]);
    expect(score(event({ type: 'server.ssh.login.failure', base: 8, enrichment: hosting }), ctx()).score).toBe(18);
    expect(score(event({ type: 'api.request', inferred: ['auth.failure'], enrichment: hosting }), ctx()).score).toBe(10);
    expect(score(event({ type: 'data.exported', base: 15, enrichment: hosting }), ctx()).score).toBe(15);
    expect(score(event({ type: 'api.request', enrichment: hosting }), ctx()).score).toBe(0);
  });

  it('adds +20 for one injection class and at most +30 for several', () => {
    const scan = (classes: InjectionClass[]) => ({ scan: classes.map((c) => ({ class: c, location: 'query' })) });
    expect(score(event({ enrichment: scan(['xss']) }), ctx()).breakdown).toEqual([{ source: 'network.xss', points: 20 }]);
    expect(score(event({ enrichment: scan(['xss', 'xss']) }), ctx()).score).toBe(20);
    const two = score(event({ enrichment: scan(['xss', 'sql_injection']) }), ctx());
    expect(two.score).toBe(30);
    expect(two.breakdown).toEqual([
      { source: 'network.sql_injection', points: 20 },
      { source: 'network.xss', points: 10 },
    ]);
    expect(score(event({ enrichment: scan(['xss', 'sql_injection', 'path_traversal', 'command_injection']) }), ctx()).score).toBe(30);
  });

  it('adds +15 for a scanner user agent, +5 for other automation, not both', () => {
    const ua = (automated: boolean, scanner?: string) => ({ userAgent: { family: 'x', automated, ...(scanner ? { scanner } : {}) } });
    expect(score(event({ enrichment: ua(true, 'sqlmap') }), ctx()).breakdown).toEqual([{ source: 'network.scanner_user_agent', points: 15 }]);
    expect(score(event({ enrichment: ua(true) }), ctx()).breakdown).toEqual([{ source: 'network.automation_user_agent', points: 5 }]);
    expect(score(event({ enrichment: ua(false) }), ctx()).score).toBe(0);
  });

  it('adds +15 more when a scanner sends an injection payload: tool and payload together reach challenge', () => {
    const enrichment = { userAgent: { family: 'x', automated: true, scanner: 'sqlmap' }, scan: [{ class: 'sql_injection' as const, location: 'query' }] };
    const r = score(event({ enrichment }), ctx());
    expect(r.breakdown).toEqual([
      { source: 'network.sql_injection', points: 20 },
      { source: 'network.scanner_user_agent', points: 15 },
      { source: 'network.scanner_with_injection', points: 15 },
    ]);
    expect(r.action).toBe('challenge');
  });

  it('adds each behavioural alert by severity, but not threat_intel or request_scanner alerts', () => {
    const r = score(
      event({
        alerts: [
          alert('auth.new_device', 'low'),
          alert('auth.new_country', 'medium', 'geo_device_anomaly'),
          alert('auth.brute_force.account', 'high'),
          alert('network.tor_exit_node', 'medium', 'threat_intel'),
          alert('request.sql_injection', 'high', 'request_scanner'),
        ],
      }),
      ctx(),
    );
    expect(r.breakdown).toEqual([
      { source: 'alert.auth.new_device', points: 10 },
      { source: 'alert.auth.new_country', points: 20 },
      { source: 'alert.auth.brute_force.account', points: 35 },
    ]);
    expect(r.score).toBe(65);
    expect(score(event({ alerts: [alert('auth.impossible_travel', 'critical', 'impossible_travel')] }), ctx()).score).toBe(50);
  });

  it('caps at 100 with a cap line, so the breakdown still sums to the score', () => {
    const r = score(
      event({
        type: 'server.container.escape_attempt',
        base: 60,
        enrichment: { threat: { torExit: true, blocklists: ['b'], hostingAsn: false } },
        alerts: [alert('host.container_escape', 'critical', 'container_security')],
      }),
      ctx(),
    );
    expect(r.score).toBe(100);
    expect(r.level).toBe('critical');
    expect(r.action).toBe('block');
    expect(r.breakdown.at(-1)).toEqual({ source: 'cap', points: -65 });
    expect(sum(r.breakdown)).toBe(100);
  });

  it('for any mix of signals: 0 <= score <= 100 and the lines add up to it', () => {
    const severity = fc.constantFrom<Severity>('low', 'medium', 'high', 'critical');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.subarray<InjectionClass>(['sql_injection', 'xss', 'path_traversal', 'command_injection']),
        fc.array(fc.tuple(severity, fc.constantFrom('brute_force', 'threat_intel', 'request_scanner', 'kill_chain')), { maxLength: 6 }),
        (base, tor, block, hosting, classes, alerts) => {
          const r = score(
            event({
              type: 'auth.login.failure',
              base,
              enrichment: {
                threat: { torExit: tor, blocklists: block ? ['b'] : [], hostingAsn: hosting },
                scan: classes.map((c) => ({ class: c, location: 'path' })),
              },
              alerts: alerts.map(([s, d], i) => alert(`a${i}`, s, d)),
            }),
            ctx(),
          );
          expect(r.score).toBeGreaterThanOrEqual(0);
          expect(r.score).toBeLessThanOrEqual(100);
          expect(sum(r.breakdown)).toBe(r.score);
          expect(r.breakdown.filter((l) => l.points < 0).length).toBe(r.breakdown.some((l) => l.source === 'cap') ? 1 : 0);
        },
      ),
    );
  });
});

describe('level and action', () => {
  it.each([
    [0, 'low', 'allow'],
    [19, 'low', 'allow'],
    [20, 'medium', 'allow'],
    [49, 'medium', 'allow'],
    [50, 'high', 'challenge'],
    [79, 'high', 'challenge'],
    [80, 'critical', 'block'],
    [100, 'critical', 'block'],
  ] as const)('score %i is %s and %s', (base, level, action) => {
    const r = score(event({ base }), ctx());
    expect([r.score, r.level, r.action]).toEqual([base, level, action]);
  });

  it('uses the account thresholds from settings.risk', () => {
    const strict = ctx({ risk: { challenge: 20, block: 40 } });
    expect(score(event({ base: 19 }), strict).action).toBe('allow');
    expect(score(event({ base: 20 }), strict).action).toBe('challenge');
    expect(score(event({ base: 40 }), strict).action).toBe('block');
    expect(score(event({ base: 40 }), strict).level).toBe('medium');
    expect(score(event({ base: 85 }), ctx({ risk: { block: 90 } })).action).toBe('challenge');
  });

  it('falls back to the defaults when stored thresholds are invalid', () => {
    expect(score(event({ base: 60 }), ctx({ risk: { challenge: 90, block: 10 } })).action).toBe('challenge');
  });

  it('takes service-wide defaults from the stage settings', () => {
    const lenient = createScoreStage({ thresholds: { challenge: 70, block: 95 } });
    expect(lenient(event({ base: 60 }), ctx()).action).toBe('allow');
    expect(lenient(event({ base: 60 }), ctx({ risk: { challenge: 55 } })).action).toBe('challenge');
  });
});

describe('validateRiskSettings', () => {
  it('accepts partial and full settings', () => {
    expect(validateRiskSettings({})).toEqual({ ok: true, value: {} });
    expect(validateRiskSettings({ challenge: 40 })).toEqual({ ok: true, value: { challenge: 40 } });
    expect(validateRiskSettings({ challenge: 30, block: 60 })).toEqual({ ok: true, value: { challenge: 30, block: 60 } });
  });

  it.each([
    [null, 'risk'],
    [[], 'risk'],
    [{ challenge: 0 }, 'risk.challenge'],
    [{ challenge: 101 }, 'risk.challenge'],
    [{ block: 50.5 }, 'risk.block'],
    [{ block: '80' }, 'risk.block'],
    [{ challenge: 80, block: 80 }, 'risk.challenge'],
    [{ block: 40 }, 'risk.block'],
    [{ challenge: 85 }, 'risk.challenge'],
    [{ warn: 10 }, 'risk.warn'],
  ])('rejects %j naming %s', (value, field) => {
    const r = validateRiskSettings(value);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.field).toBe(field);
  });

  it('says what each field accepts', () => {
    expect(validateRiskSettings({ challenge: 0, block: '80', warn: 10 })).toEqual({
      ok: false,
      errors: [
        { field: 'risk.warn', message: 'risk.warn is not allowed here (allowed: challenge, block)' },
        { field: 'risk.challenge', message: 'risk.challenge must be an integer from 1 to 100' },
        { field: 'risk.block', message: 'risk.block must be an integer from 1 to 100' },
      ],
    });
    expect(validateRiskSettings([])).toEqual({ ok: false, errors: [{ field: 'risk', message: 'risk must be an object {"challenge": 50, "block": 80}' }] });
  });
});

describe('decision floors', () => {
  const decided = (type: string, severity: Severity, decision: 'challenge' | 'block'): AlertHit => ({ ...alert(type, severity), decision });

  it('a high alert alone reaches challenge and a critical one block, with a floor line that keeps the sum', () => {
    const high = score(event({ alerts: [decided('auth.impossible_travel', 'high', 'challenge')] }), ctx());
    expect(high).toMatchObject({ score: 50, action: 'challenge', level: 'high' });
    expect(high.breakdown).toEqual([
      { source: 'alert.auth.impossible_travel', points: 35 },
      { source: 'floor.auth.impossible_travel', points: 15 },
    ]);
    const critical = score(event({ alerts: [decided('auth.credential_stuffing_success', 'critical', 'block')] }), ctx());
    expect(critical).toMatchObject({ score: 80, action: 'block' });
    expect(sum(critical.breakdown)).toBe(80);
  });

  it('follows the account thresholds, and never lowers a score already above the floor', () => {
    const hit = [decided('session.hijack_suspected', 'high', 'challenge')];
    expect(score(event({ alerts: hit }), ctx({ risk: { challenge: 40, block: 90 } }))).toMatchObject({ score: 40, action: 'challenge' });
    expect(score(event({ alerts: hit }), ctx({ risk: { challenge: 70, block: 90 } }))).toMatchObject({ score: 70, action: 'challenge' });
    const above = score(event({ base: 40, alerts: hit }), ctx());
    expect(above).toMatchObject({ score: 75, action: 'challenge' });
    expect(above.breakdown.some((l) => l.source.startsWith('floor.'))).toBe(false);
  });

  it('an alert standing over the actor lifts a later event to challenge; alerts without a decision lift nothing', () => {
    const later = score({ ...event({}), standing: { type: 'auth.brute_force.account', via: 'actor:u1', until: 1 } }, ctx());
    expect(later).toMatchObject({ score: 50, action: 'challenge' });
    expect(later.breakdown).toEqual([{ source: 'floor.standing.auth.brute_force.account', points: 50 }]);
    expect(score(event({ alerts: [alert('custom.model', 'critical', 'threat_model')] }), ctx()).action).toBe('challenge');
    expect(score(event({ alerts: [alert('auth.new_country', 'medium', 'geo_device_anomaly')] }), ctx())).toMatchObject({ score: 20, action: 'allow' });
  });
});
