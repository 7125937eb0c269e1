/** sigma.ts and field-mapping.ts on real rules: the native body a rule becomes, and what is refused by name. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIGMA_FIELDS, mapSigmaField, validateFieldMapping } from '../../src/threat-models/field-mapping.js';
import { translateSigma } from '../../src/threat-models/sigma.js';
import { validateModel } from '../../src/threat-models/validate.js';

const RULE = `title: Admin export at night
level: high
tags: [attack.exfiltration]
logsource: { product: webapp }
detection:
  selection:
    cs-method: POST
    cs-uri-stem|endswith: /export
    SourceIp|cidr: 10.0.0.0/8
  filter:
    User: svc_backup
  condition: selection and not filter
`;

const translated = (rule: string | Record<string, unknown>, fields = {}) => {
  const t = translateSigma(rule, { fields });
  if (!t.ok) throw new Error(JSON.stringify(t.errors));
  return t.body;
};

describe('translateSigma', () => {
  it('turns a rule into a native model that validates: fields mapped, modifiers as ops, level as severity', () => {
    const body = translated(RULE);
    expect(body).toMatchObject({
      name: 'Admin export at night',
      enabled: true,
      outcome: { alert: 'custom.admin_export_at_night', severity: 'high', tags: ['attack.exfiltration'] },
    });
    const text = JSON.stringify(body.match);
    for (const part of ['"request.method"', '"request.path"', '"endswith"', '"/export"', '"cidr"', '"10.0.0.0/8"', '"not"', '"actor_id"'])
      expect(text).toContain(part);
    expect(validateModel(body).ok).toBe(true);
  });

  it('reads the rule as YAML text or as JSON, the same way', () => {
    const asJson = {
      title: 'Admin export at night',
      level: 'high',
      tags: ['attack.exfiltration'],
      detection: {
        selection: { 'cs-method': 'POST', 'cs-uri-stem|endswith': '/export', 'SourceIp|cidr': '10.0.0.0/8' },
        filter: { User: 'svc_backup' },
        condition: 'selection and not filter',
      },
    };
    expect(translated(asJson).match).toEqual(translated(RULE).match);
  });

  it('takes a correlation timespan as any duration, and refuses one that is none', () => {
    const correlation = (timespan: string) => `title: many failures
correlation:
  type: event_count
  rules: [fail]
  group-by: [User]
  timespan: ${timespan}
  condition: { gte: 5 }
---
title: failed login
name: fail
logsource: { product: webapp }
detection:
  selection: { event.action: login_failed }
  condition: selection
`;
    expect(translated(correlation('5m')).threshold).toEqual({ count: 5, window_seconds: 300, group_by: ['actor_id'] });
    expect(translated(correlation('2h')).threshold).toMatchObject({ window_seconds: 7200 });
    expect(translated(correlation('90')).threshold).toMatchObject({ window_seconds: 90 });
    const refused = translateSigma(correlation('5 minutes'));
    expect(refused).toEqual({
      ok: false,
      errors: [{ field: 'rule.correlation.timespan', message: 'timespan must be a duration: a number and a unit s, m, h, d or w (e.g. 5m), or seconds' }],
    });
  });

  it('makes a value list one `in` condition and a range list one `cidr` condition, so long SigmaHQ lists fit a model', () => {
    const ranges = Array.from({ length: 70 }, (_, i) => `10.${i}.0.0/16`);
    const names = Array.from({ length: 70 }, (_, i) => `Tool${i}.exe`);
    const rule = {
      title: 'office to the internet',
      detection: {
        selection: { 'Image|endswith': ['\\excel.exe', '\\winword.exe'], Initiated: 'true', OriginalFileName: names, DestinationPort: [80, 443] },
        filter_ranges: { 'DestinationIp|cidr': ranges },
        filter_null: { CommandLine: null },
        condition: 'selection and not 1 of filter_*',
      },
    };
    const body = translated(rule);
    expect(validateModel(body).ok).toBe(true);
    const where = (body.match as { where: unknown }).where;
    expect(where).toEqual({
      all: [
        {
          all: [
            {
              any: [
                { field: 'metadata.Image', op: 'endswith', value: '\\excel.exe', ignore_case: true },
                { field: 'metadata.Image', op: 'endswith', value: '\\winword.exe', ignore_case: true },
              ],
            },
            { field: 'metadata.Initiated', op: 'equals', value: 'true', ignore_case: true },
            { field: 'metadata.OriginalFileName', op: 'in', value: names, ignore_case: true },
            { field: 'metadata.server_port', op: 'in', value: [80, 443] },
          ],
        },
        {
          not: {
            any: [
              { field: 'metadata.server_ip', op: 'cidr', value: ranges },
              { field: 'metadata.CommandLine', op: 'equals', value: null },
            ],
          },
        },
      ],
    });
    // `null` (missing) and `cased` values keep their own conditions; a lone value stays `equals`.
    const mixed = translated({
      title: 'x',
      detection: { selection: { User: ['root', null, 'admin'], 'Image|cased': ['A.exe', 'B.exe'] }, condition: 'selection' },
    });
    expect((mixed.match as { where: unknown }).where).toEqual({
      all: [
        {
          any: [
            { field: 'actor_id', op: 'in', value: ['root', 'admin'], ignore_case: true },
            { field: 'actor_id', op: 'equals', value: null },
          ],
        },
        { field: 'metadata.Image', op: 'in', value: ['A.exe', 'B.exe'] },
      ],
    });
  });

  it('refuses an unsupported construct by name', () => {
    const timeframe = translateSigma(`title: x
detection:
  selection: { User: root }
  timeframe: 5m
  condition: selection
`);
    expect(timeframe.ok).toBe(false);
    expect(!timeframe.ok && timeframe.errors[0]?.message).toMatch(/timeframe/);
    const expand = translateSigma('title: x\ndetection:\n  selection: { User|expand: "%admins%" }\n  condition: selection\n');
    expect(!expand.ok && expand.errors[0]?.message).toMatch(/expand/);
  });

  it('answers any text with a translation or errors, never an exception', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const t = translateSigma(text);
        expect(t.ok || t.errors.length > 0).toBe(true);
      }),
    );
  });
});

describe('the Sigma field mapping', () => {
  it('maps by the account mapping first, then the table, then Vigil names, then any case of the table, else metadata', () => {
    expect(mapSigmaField('User')).toBe('actor_id');
    expect(mapSigmaField('User', { User: 'email' })).toBe('email');
    expect(mapSigmaField('request.path')).toBe('request.path');
    expect(mapSigmaField('sourceip')).toBe('ip');
    expect(mapSigmaField('CommandLine')).toBe('metadata.CommandLine');
    for (const [name, target] of Object.entries(DEFAULT_SIGMA_FIELDS)) expect(mapSigmaField(name)).toBe(target);
  });

  it('validates an account mapping entry by entry', () => {
    expect(validateFieldMapping({ SrcAddr: 'ip', Op: 'metadata.operation' })).toEqual({ ok: true, value: { SrcAddr: 'ip', Op: 'metadata.operation' } });
    expect(validateFieldMapping(['ip'])).toEqual({
      ok: false,
      errors: [{ field: 'fields', message: 'must be an object {"<Sigma field>": "<Vigil field path>"} of at most 200 entries' }],
    });
    expect(validateFieldMapping({ 'a|b': 'ip', Nick: 'nickname', N: 3 })).toEqual({
      ok: false,
      errors: [
        { field: 'fields.a|b', message: 'a Sigma field name of 1 to 128 characters without "|"' },
        { field: 'fields.Nick', message: 'must be a Vigil field path such as "actor_id", "request.path" or "metadata.<name>"' },
        { field: 'fields.N', message: 'must be a Vigil field path such as "actor_id", "request.path" or "metadata.<name>"' },
      ],
    });
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`f${i}`, 'ip']));
    expect(validateFieldMapping(many)).toEqual({
      ok: false,
      errors: [{ field: 'fields', message: 'must be an object {"<Sigma field>": "<Vigil field path>"} of at most 200 entries' }],
    });
  });
});
