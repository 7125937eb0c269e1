import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventSchema, RequestSchema } from '../../src/pipeline/event-schema.js';

type Schema = Readonly<Record<string, unknown>>;

/** The rows of the field table in docs/reference/fields.md: field -> [type, limits, meaning]. */
function documentedFields(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of readFileSync(new URL('../../docs/reference/fields.md', import.meta.url), 'utf8').split('\n')) {
    const match = /^\| `([a-z0-9_.]+)` +\|(.*)\|$/.exec(line);
    if (match)
      rows.set(
        match[1] as string,
        (match[2] as string).split(' | ').map((cell) => cell.trim()),
      );
  }
  return rows;
}

/** Every numeric limit the schema sets (lengths, bounds), in every branch of a union. */
function limitsOf(schema: Schema): number[] {
  const own = ['minLength', 'maxLength', 'minimum', 'maximum'].flatMap((k) => (typeof schema[k] === 'number' ? [schema[k]] : []));
  // A minimum length of 1 reads "1 to N"; only lengths above it need stating.
  const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as Schema[]).flatMap(limitsOf) : [];
  return [...own, ...branches];
}

const schemaFields = (): [string, Schema][] => [
  ...Object.entries(EventSchema.properties),
  ...Object.entries(RequestSchema.properties).map(([name, schema]): [string, Schema] => [`request.${name}`, schema]),
];

describe('docs/reference/fields.md: the field reference matches the event schema', () => {
  const documented = documentedFields();

  it('documents every field of the schema, and no other', () => {
    expect([...documented.keys()].sort()).toEqual(
      schemaFields()
        .map(([name]) => name)
        .sort(),
    );
  });

  it.each(schemaFields())('%s: its type, limits and meaning are stated, every limit as the schema sets it', (name, schema) => {
    const [type, limits, meaning] = documented.get(name) ?? [];
    expect(type).toBeTruthy();
    expect(meaning?.length ?? 0).toBeGreaterThan(10);
    const stated = (limits ?? '').match(/\d+/g)?.map(Number) ?? [];
    for (const limit of limitsOf(schema)) expect({ name, stated }).toEqual({ name, stated: expect.arrayContaining([limit]) });
    if (typeof schema.pattern === 'string' && name === 'event') expect(limits).toContain(schema.pattern);
  });
});
