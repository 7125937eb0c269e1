import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/catalog.js';
import { AGENT_ADDITIONAL_TYPES, AGENT_TYPES, STANDARD_TYPES } from '../../src/catalog/event-types.js';
import { DETECTOR_FAMILIES, INFERRED_TYPES } from '../../src/event/classification.js';
import type { ValidatedEvent } from '../../src/event/types.js';
import { FIXTURE_INPUT } from './fixture-input.js';

/** The published base-score table, copied row by row (not from the source). */
const SPEC_TABLE: ReadonlyArray<readonly [number, string]> = [
  [60, '`server.container.escape_attempt`'],
  [50, '`server.log.tampered`'],
  [45, '`server.log.cleared`'],
  [40, '`auth.mfa.bypass_attempted`'],
  [35, '`server.process.suspicious`, `server.network.port_scan_detected`'],
  [30, '`auth.mfa.disabled`'],
  [25, '`admin.user.impersonated`'],
  [20, '`account.role.changed`'],
  [15, '`account.deleted`, `account.email.changed`, `data.exported`, `server.file.modified`, `server.firewall.rule_removed`, `server.user.su`'],
  [12, '`account.phone.changed`, `api.unauthorized`, `server.file.deleted`, `server.file.permission_changed`, `server.cron.added`'],
  [
    10,
    '`auth.login.failure`, `auth.password.changed`, `auth.oauth.connected`, `account.suspended`, `data.bulk_import`, `data.downloaded`, `admin.config.changed`, `server.user.created`, `server.user.deleted`, `server.user.sudo`, `server.cron.modified`',
  ],
  [
    8,
    '`auth.password.reset_requested`, `auth.oauth.disconnected`, `data.modified`, `admin.settings.updated`, `admin.api_key.revoked`, `server.ssh.login.failure`, `server.firewall.rule_added`',
  ],
  [5, '`auth.session.revoked`, `auth.token.revoked`, `data.accessed`, `admin.billing.updated`, `admin.api_key.created`, `api.rate_limited`'],
  [3, '`api.request.failed`, `server.process.executed`, `server.container.started`'],
];
const SPEC_SCORES = new Map(SPEC_TABLE.flatMap(([score, cell]) => cell.split(',').map((t) => [t.trim().replaceAll('`', ''), score] as const)));

const catalog = buildCatalog(FIXTURE_INPUT);
const event = (type: string): ValidatedEvent => ({ type, occurredAt: 0, receivedAt: 0, metadata: {} });
/** The host agent's shadow-utils types beyond the 28 agent types: not in the table, so base 0 (detectors and alerts may still score them). */
const ADDITIONAL_SCORES = new Map([
  ['server.user.modified', 0],
  ['server.group.created', 0],
  ['server.group.deleted', 0],
]);
const ALL_TYPES = [...STANDARD_TYPES, ...AGENT_TYPES, ...AGENT_ADDITIONAL_TYPES].map((t) => t.type);
const scoreOf = (type: string) => SPEC_SCORES.get(type) ?? ADDITIONAL_SCORES.get(type) ?? 0;

describe('catalog counts', () => {
  it('has 67 standard, 28 agent, 3 additional agent, 10 inferred types and 10 families', () => {
    expect(STANDARD_TYPES).toHaveLength(67);
    expect(AGENT_TYPES).toHaveLength(28);
    expect(AGENT_ADDITIONAL_TYPES.map((t) => t.type)).toEqual([...ADDITIONAL_SCORES.keys()]);
    expect(new Set(ALL_TYPES).size).toBe(98);
    expect(INFERRED_TYPES).toHaveLength(10);
    expect(DETECTOR_FAMILIES).toHaveLength(10);
    const counts = catalog.describe().counts as Record<string, number>;
    expect(counts).toMatchObject({ standard_types: 67, agent_types: 28, additional_agent_types: 3, inferred_types: 10, families: 10 });
  });

  it('has the seven standard prefixes and agent types only under server.', () => {
    expect(new Set(STANDARD_TYPES.map((t) => t.type.split('.')[0]))).toEqual(new Set(['auth', 'account', 'data', 'admin', 'api']));
    expect([...AGENT_TYPES, ...AGENT_ADDITIONAL_TYPES].every((t) => t.type.startsWith('server.'))).toBe(true);
  });

  it('every type matches the event type expression and maps to at least one family', () => {
    const re = /^[a-z][a-z0-9]{0,29}(\.[a-z][a-z0-9_]{0,29}){1,3}$/;
    for (const t of [...STANDARD_TYPES, ...AGENT_TYPES, ...AGENT_ADDITIONAL_TYPES]) {
      expect(t.type).toMatch(re);
      expect(t.families.length).toBeGreaterThan(0);
    }
  });

  it('the spec table names 47 scored types, all in the catalog', () => {
    expect(SPEC_SCORES.size).toBe(47);
    for (const type of SPEC_SCORES.keys()) expect(ALL_TYPES).toContain(type);
  });
});

describe('base scores', () => {
  it.each([...SPEC_SCORES])('%s scores %i', (type, score) => {
    const c = catalog.classify(event(type));
    expect(c.predefined).toBe(true);
    expect(c.baseScore).toBe(score);
  });

  it.each([...ADDITIONAL_SCORES])('%s (additional agent type) scores %i and reaches the host detectors', (type, score) => {
    const c = catalog.classify(event(type));
    expect(c.predefined).toBe(true);
    expect(c.baseScore).toBe(score);
    expect(c.families.has('host')).toBe(true);
  });

  it('a user added to a group is a privilege change', () => {
    expect(catalog.classify(event('server.user.modified')).families.has('privilege')).toBe(true);
  });

  it.each(ALL_TYPES.filter((t) => !SPEC_SCORES.has(t) && !ADDITIONAL_SCORES.has(t)))('%s is unlisted and scores 0', (type) => {
    const c = catalog.classify(event(type));
    expect(c.predefined).toBe(true);
    expect(c.baseScore).toBe(0);
  });

  it('custom.* and unknown types score 0 and are not predefined', () => {
    for (const type of ['custom.checkout.completed', 'custom.server.log.tampered', 'auth.login.weird', 'billing.invoice.paid']) {
      const c = catalog.classify(event(type));
      expect(c.predefined).toBe(false);
      expect(c.baseScore).toBe(0);
    }
  });

  it('the document lists every type with the same base score as classify', () => {
    const types = catalog.describe().event_types as { type: string; base_score: number }[];
    expect(types).toHaveLength(98);
    for (const t of types) expect(t.base_score).toBe(scoreOf(t.type));
  });
});
