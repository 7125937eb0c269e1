/** validate.ts on real model bodies: the normalised definition, and every problem at its exact path. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEVERITY_WEIGHTS } from '../../src/scoring/weights.js';
import { LIMITS } from '../../src/threat-models/model.js';
import { isCidr, isFieldPath, validateModel } from '../../src/threat-models/validate.js';

const base = { name: 'm', match: { event: 'custom.*' }, outcome: { alert: 'custom.m', severity: 'high' } };
const errorsOf = (body: unknown): Record<string, string> => {
  const checked = validateModel(body);
  return checked.ok ? {} : Object.fromEntries(checked.errors.map((e) => [e.field, e.message]));
};

describe('validateModel', () => {
  it('normalises a valid body: event globs as a list, enabled by default, points from the severity weights', () => {
    const checked = validateModel(base);
    expect(checked).toEqual({
      ok: true,
      value: {
        name: 'm',
        enabled: true,
        match: { event: ['custom.*'] },
        outcome: { alert: 'custom.m', severity: 'high', points: SEVERITY_WEIGHTS.high, tags: [] },
      },
    });
    for (const severity of ['low', 'medium', 'high', 'critical'] as const) {
      const v = validateModel(Object.assign({}, base, { outcome: { alert: 'custom.m', severity } }));
      expect(v.ok && v.value.outcome.points).toBe(SEVERITY_WEIGHTS[severity]);
    }
  });

  it('reports every problem at its path with what is wrong there', () => {
    const errors = errorsOf({
      name: '',
      colour: 'red',
      match: {
        event: 'bad glob!',
        where: {
          all: [
            { field: 'nickname', op: 'equals', value: 'x' },
            { field: 'ip', op: 'cidr', value: ['10.0.0.0/8', '010.0.0.0/8'] },
            { field: 'metadata.n', op: 'gt', value: 'ten' },
            { field: 'metadata.s', op: 'contains', value: 'x', flags: 'i' },
          ],
        },
      },
      threshold: { count: 0, window_seconds: LIMITS.windowSeconds + 1 },
      outcome: { alert: 'brute_force', severity: 'urgent', tags: ['ok', 'not ok'] },
    });
    expect(errors).toEqual({
      name: 'must be a non-empty string',
      colour: 'unknown field "colour"; expected one of: name, enabled, description, match, threshold, sequence, outcome',
      'match.event': 'must be an event type glob of letters, digits, ".", "_", "-" and "*"',
      'match.where.all[0].field': expect.stringMatching(/^unknown field "nickname"; use one of event, event_id/),
      'match.where.all[1].value[1]': '"010.0.0.0/8" is not a CIDR (address/prefix, such as 10.0.0.0/8 or 2001:db8::/32)',
      'match.where.all[2].value': 'must be a number',
      'match.where.all[3].flags': 'only a regex takes flags: any of "i", "m", "s"',
      'threshold.count': `must be a whole number from 1 to ${LIMITS.thresholdCount}`,
      'threshold.window_seconds': `must be a whole number from 1 to ${LIMITS.windowSeconds}`,
      'outcome.alert': 'must be an alert type "custom.<name>" of lowercase letters, digits and "_" (up to 3 names after custom.)',
      'outcome.severity': 'must be one of low, medium, high, critical',
      'outcome.tags[1]': `must be a tag of letters, digits, "_", ".", ":" and "-", at most ${LIMITS.tagLength} characters`,
    });
  });

  it('refuses a threshold and a sequence together, conditions nested too deep, and a regex RE2 refuses', () => {
    expect(
      errorsOf(Object.assign({}, base, { threshold: { count: 2, window_seconds: 60 }, sequence: { then: [{ event: 'x' }], window_seconds: 60 } })),
    ).toEqual({
      sequence: 'a model has a threshold or a sequence, not both',
    });
    let deep: Record<string, unknown> = { field: 'actor_id', op: 'exists', value: true };
    for (let i = 0; i <= LIMITS.nestingDepth; i++) deep = { not: deep };
    expect(Object.values(errorsOf(Object.assign({}, base, { match: { event: 'x', where: deep } })))).toEqual([
      `conditions nest at most ${LIMITS.nestingDepth} deep`,
    ]);
    expect(
      errorsOf(Object.assign({}, base, { match: { event: 'x', where: { field: 'actor_id', op: 'regex', value: '(?=a)' } } }))['match.where.value'],
    ).toBeDefined();
  });

  it('answers a body that is not an object, and never throws on any JSON', () => {
    expect(validateModel([])).toEqual({ ok: false, errors: [{ field: '(body)', message: 'a threat model must be a JSON object' }] });
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (body) => {
        const checked = validateModel(body);
        if (!checked.ok) for (const e of checked.errors) expect(e.message.length).toBeGreaterThan(0);
      }),
    );
    fc.assert(
      fc.property(fc.record({ field: fc.constantFrom('ip', 'metadata.x', '*', 'nope'), op: fc.string(), value: fc.jsonValue({ maxDepth: 2 }) }), (where) => {
        validateModel(Object.assign({}, base, { match: { event: 'custom.*', where } }));
      }),
    );
  });
});

describe('isCidr and isFieldPath', () => {
  it('isCidr takes an address and a prefix, read as util/ip.ts reads them', () => {
    expect(['10.0.0.0/8', '10.0.0.1/32', '2001:db8::/32', '::/0', '0.0.0.0/0'].filter((c) => !isCidr(c))).toEqual([]);
    expect(['10.0.0.1', '010.0.0.0/8', '10.1/16', '0x0a.0.0.0/8', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/', 'x/8'].filter(isCidr)).toEqual([]);
  });

  it('isFieldPath takes the event fields and paths under metadata and enrichment', () => {
    expect(['actor_id', 'request.path', 'metadata.rows', 'enrichment.geo.country'].every(isFieldPath)).toBe(true);
    expect(['nickname', 'metadata', 'metadata.', 'request.body'].some(isFieldPath)).toBe(false);
  });
});
