/** input.ts: what a request body says a model is — native, Sigma YAML, or a Sigma rule with overrides. */
import { describe, expect, it } from 'vitest';
import { parseModelInput } from '../../src/threat-models/input.js';

const RULE = 'title: Root login\nlevel: high\ndetection:\n  selection: { User: root }\n  condition: selection\n';
const native = { name: 'n', match: { event: 'custom.*' }, outcome: { alert: 'custom.n', severity: 'low' } };

describe('parseModelInput', () => {
  it('reads a native model, Sigma YAML, and a Sigma rule with overrides, each to a validated definition and its source', () => {
    expect(parseModelInput(Object.assign({ format: 'native' }, native), {})).toMatchObject({
      ok: true,
      value: { source: { format: 'native' }, definition: { name: 'n' } },
    });
    expect(parseModelInput(RULE, {})).toMatchObject({
      ok: true,
      value: { source: { format: 'sigma', rule: RULE }, definition: { outcome: { severity: 'high' } } },
    });
    const overridden = parseModelInput({ format: 'sigma', rule: RULE, name: 'Renamed', event: 'auth.*', enabled: false }, {});
    expect(overridden).toMatchObject({ ok: true, value: { definition: { name: 'Renamed', enabled: false, match: { event: ['auth.*'] } } } });
  });

  it('says what is wrong with the body around a Sigma rule, each at its field', () => {
    expect(parseModelInput({ format: 'sigma', rule: 5, colour: 'red' }, {})).toEqual({
      ok: false,
      errors: [
        { field: 'colour', message: 'colour is not allowed here (allowed: format, rule, enabled, event, outcome, name)' },
        { field: 'rule', message: 'the Sigma rule: YAML text, or the rule as a JSON object' },
      ],
    });
    expect(parseModelInput({ format: 'yaml' }, {})).toEqual({ ok: false, errors: [{ field: 'format', message: 'must be "native" or "sigma"' }] });
    expect(parseModelInput(7, {})).toEqual({ ok: false, errors: [{ field: '(body)', message: 'send a threat model object, or a Sigma rule as YAML' }] });
  });

  it('marks the problems of a translated model as coming from the Sigma rule', () => {
    const refused = parseModelInput({ format: 'sigma', rule: RULE, outcome: { severity: 'urgent' } }, {});
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.errors[0]).toEqual({
      field: 'outcome.severity',
      message: 'must be one of low, medium, high, critical (in the model translated from the Sigma rule)',
    });
  });
});
