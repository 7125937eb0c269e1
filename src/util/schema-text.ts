/**
 * Validation problems in words, from the JSON Schema a value failed: one message per field that
 * names the field and what it accepts ("status must be one of: open, acknowledged"), whichever
 * validator found the problem (TypeBox for events, Ajv for the other routes).
 */

type Schema = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);

const quoted = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

const branchesOf = (schema: Schema): readonly Schema[] | undefined => {
  const branches = schema.anyOf ?? schema.oneOf;
  return Array.isArray(branches) ? branches.filter(isSchema) : undefined;
};

/** The allowed values when the schema is a closed list (const, enum, or a union of them). */
function allowedValues(schema: Schema): readonly unknown[] | undefined {
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  const branches = branchesOf(schema);
  if (branches === undefined) return undefined;
  const values: unknown[] = [];
  for (const branch of branches) {
    const own = allowedValues(branch);
    if (own === undefined) return undefined;
    values.push(...own);
  }
  return values;
}

function range(min: unknown, max: unknown, unit: string): string {
  if (typeof min === 'number' && typeof max === 'number') return min === max ? ` of exactly ${min}${unit}` : ` of ${min} to ${max}${unit}`;
  if (typeof max === 'number') return ` of at most ${max}${unit}`;
  if (typeof min === 'number') return ` of at least ${min}${unit}`;
  return '';
}

/** What a schema accepts, as the end of "<field> must be …". */
export function expectation(schema: Schema): string {
  const values = allowedValues(schema);
  if (values !== undefined) return values.length === 1 ? quoted(values[0]) : `one of: ${values.map(quoted).join(', ')}`;
  const branches = branchesOf(schema);
  if (branches !== undefined) return branches.map(expectation).join(', or ');
  switch (schema.type) {
    case 'string': {
      const chars = range(schema.minLength, schema.maxLength, ' characters');
      const pattern = typeof schema.pattern === 'string' ? ` matching ${schema.pattern}` : '';
      return `a string${chars}${pattern && chars ? ',' : ''}${pattern}`;
    }
    case 'integer':
    case 'number': {
      const kind = schema.type === 'integer' ? 'an integer' : 'a number';
      const { minimum: min, maximum: max } = schema;
      if (typeof min === 'number' && typeof max === 'number') return `${kind} from ${min} to ${max}`;
      if (typeof min === 'number') return `${kind} of at least ${min}`;
      if (typeof max === 'number') return `${kind} of at most ${max}`;
      return kind;
    }
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return `an array${range(schema.minItems, schema.maxItems, ' items')}`;
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

/** "<field> must be …" for a value that does not fit `schema`. */
export const mismatchMessage = (field: string, schema: Schema): string => `${field} must be ${expectation(schema)}`;

export const requiredMessage = (field: string): string => `${field} is required`;

/** A member an object schema does not allow, with the members it does. */
export function unknownMemberMessage(field: string, parent: Schema | undefined): string {
  const known = isSchema(parent?.properties) ? Object.keys(parent.properties) : [];
  return known.length === 0 ? `${field} is not allowed here` : `${field} is not allowed here (allowed: ${known.join(', ')})`;
}

/** A JSON Pointer (`/a/0/b`) as a field path (`a.0.b`); the empty pointer is the body itself. */
export const fieldOfPointer = (pointer: string, member?: string): string => {
  const path = pointer.replace(/^\//, '').replace(/\//g, '.');
  const full = member === undefined ? path : path ? `${path}.${member}` : member;
  return full || '(body)';
};
