import { Type } from '@sinclair/typebox';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemaCheck } from '../../src/util/schema-check.js';

const check = schemaCheck(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 8 }),
      size: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
      file: Type.Optional(Type.String({ pattern: '^[a-z]+$', message: 'must be a plain lower-case name' })),
      tags: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false },
  ),
);

describe('schemaCheck', () => {
  it('answers the typed value when it fits', () => {
    expect(check({ name: 'a', size: 3 })).toEqual({ ok: true, value: { name: 'a', size: 3 } });
  });

  it('says each problem once per field, naming the field and what it accepts, in its own words where the schema has them', () => {
    expect(check({ size: 0, file: 'A/B', tags: ['x', 2], colour: 'red' })).toEqual({
      ok: false,
      errors: [
        { field: 'name', message: 'name is required' },
        { field: 'colour', message: 'colour is not allowed here (allowed: name, size, file, tags)' },
        { field: 'size', message: 'size must be an integer from 1 to 10' },
        { field: 'file', message: 'must be a plain lower-case name' },
        { field: 'tags.1', message: 'tags.1 must be a string' },
      ],
    });
    expect(check('text')).toEqual({ ok: false, errors: [{ field: '(body)', message: '(body) must be an object' }] });
    const named = schemaCheck(Type.Object({ n: Type.Integer() }), 'limits');
    expect(named({ n: 'x' })).toEqual({ ok: false, errors: [{ field: 'limits.n', message: 'limits.n must be an integer' }] });
    expect(named(null)).toEqual({ ok: false, errors: [{ field: 'limits', message: 'limits must be an object' }] });
  });

  it('never throws, and accepts exactly what the schema accepts', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => {
        const checked = check(value);
        const fits = typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Record<string, unknown>).name === 'string';
        if (checked.ok) expect(fits).toBe(true);
        else expect(checked.errors.length).toBeGreaterThan(0);
      }),
    );
  });
});
