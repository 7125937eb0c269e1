/**
 * What a request body says a model is: a native model, a Sigma rule as YAML text, or
 * `{"format": "sigma", "rule": <YAML text or the rule as JSON>, ...overrides}`. Both end as a
 * validated native definition and the source it came from.
 */
import { Type } from '@sinclair/typebox';
import type { ErrorDetail } from '../event/rejection.js';
import { schemaCheck } from '../util/schema-check.js';
import type { FieldMapping } from './field-mapping.js';
import type { ModelSource, ThreatModelDefinition } from './model.js';
import { translateSigma } from './sigma.js';
import { validateModel, type Validation } from './validate.js';

export interface ModelInputValue {
  readonly definition: ThreatModelDefinition;
  readonly source: ModelSource;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A Sigma rule and the native members that override its translation (checked with the model). */
const checkSigmaRequest = schemaCheck(
  Type.Object(
    {
      format: Type.Literal('sigma'),
      rule: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], { message: 'the Sigma rule: YAML text, or the rule as a JSON object' }),
      enabled: Type.Optional(Type.Unknown()),
      event: Type.Optional(Type.Unknown()),
      outcome: Type.Optional(Type.Unknown()),
      name: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
);

function fromSigma(rule: string | Record<string, unknown>, fields: FieldMapping, overrides: Record<string, unknown>): Validation<ModelInputValue> {
  const translated = translateSigma(rule, { fields }, overrides);
  if (!translated.ok) return translated;
  const checked = validateModel(translated.body);
  if (!checked.ok) {
    const errors: ErrorDetail[] = checked.errors.map((e) => ({ field: e.field, message: `${e.message} (in the model translated from the Sigma rule)` }));
    return { ok: false, errors };
  }
  return { ok: true, value: { definition: checked.value, source: { format: 'sigma', rule: translated.rule } } };
}

export function parseModelInput(body: unknown, fields: FieldMapping): Validation<ModelInputValue> {
  if (typeof body === 'string') return fromSigma(body, fields, {});
  if (!isObject(body)) return { ok: false, errors: [{ field: '(body)', message: 'send a threat model object, or a Sigma rule as YAML' }] };
  if (body.format === 'sigma') {
    const checked = checkSigmaRequest(body);
    if (!checked.ok) return checked;
    const { format, rule, ...overrides } = checked.value;
    void format;
    return fromSigma(rule, fields, overrides);
  }
  if (body.format !== undefined && body.format !== 'native') return { ok: false, errors: [{ field: 'format', message: 'must be "native" or "sigma"' }] };
  const { format, ...native } = body;
  void format;
  const checked = validateModel(native);
  return checked.ok ? { ok: true, value: { definition: checked.value, source: { format: 'native' } } } : checked;
}
