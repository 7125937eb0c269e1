/**
 * Checks a native model before it is saved or tested: every problem is reported with the exact
 * path in the body (`match.where.all[2].value`) and what is wrong there. A model that passes
 * compiles (regexes on the linear-time engine, CIDRs, globs) and stays inside LIMITS.
 */
import type { Severity } from '../event/classification.js';
import type { ErrorDetail } from '../event/rejection.js';
import { SEVERITY_WEIGHTS } from '../scoring/weights.js';
import { parseCidr } from '../util/ip.js';
import { compileTenantRegex } from '../util/tenant-pattern.js';
import { compileModel } from './compile.js';
import {
  CONDITION_OPS,
  LIMITS,
  type Condition,
  type ConditionOp,
  type FieldCondition,
  type MatchSpec,
  type Outcome,
  type SequenceSpec,
  type ThreatModelDefinition,
  type ThresholdSpec,
} from './model.js';

export type Validation<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly ErrorDetail[] };

const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];
/**
 * Top-level event fields a condition may read; `metadata.*` and `enrichment.*` reach inside those
 * objects. `request.url` (the path, then `?` and the query when there is one) and
 * `request.extension` (of the path's last segment, lower case, without the dot) are derived.
 */
export const EVENT_FIELDS: readonly string[] = [
  'event',
  'event_id',
  'actor_id',
  'email',
  'ip',
  'user_agent',
  'session_id',
  'host',
  'request.method',
  'request.path',
  'request.status',
  'request.query',
  'request.url',
  'request.extension',
];
const NESTED_ROOTS = ['metadata.', 'enrichment.'];
const ALERT_TYPE = /^custom(\.[a-z0-9_]{1,48}){1,3}$/;
const EVENT_GLOB = /^[A-Za-z0-9_.*-]{1,128}$/;
const STRING_OPS: ReadonlySet<ConditionOp> = new Set(['equals', 'contains', 'startswith', 'endswith', 'wildcard', 'regex']);
const NUMBER_OPS: ReadonlySet<ConditionOp> = new Set(['gt', 'gte', 'lt', 'lte']);
const ANY_FIELD = '*';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);

export function isFieldPath(path: string): boolean {
  if (EVENT_FIELDS.includes(path)) return true;
  return NESTED_ROOTS.some((root) => path.startsWith(root) && path.length > root.length && path.length <= 256);
}

class Checker {
  readonly errors: ErrorDetail[] = [];
  leaves = 0;
  /** RE2 instructions of every regular expression so far: what compiling the model costs. */
  instructions = 0;

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  known(obj: Record<string, unknown>, path: string, keys: readonly string[]): void {
    for (const key of Object.keys(obj)) if (!keys.includes(key)) this.fail(join(path, key), `unknown field "${key}"; expected one of: ${keys.join(', ')}`);
  }

  string(v: unknown, path: string, max: number, required = true): string | undefined {
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v.trim().length === 0) return void this.fail(path, 'must be a non-empty string');
    if (v.length > max) return void this.fail(path, `must be at most ${max} characters (has ${v.length})`);
    return v;
  }

  integer(v: unknown, path: string, min: number, max: number): number | undefined {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return void this.fail(path, `must be a whole number from ${min} to ${max}`);
    return v;
  }

  field(v: unknown, path: string, allowAny = false): string | undefined {
    if (typeof v !== 'string') return void this.fail(path, 'must be a field path such as "actor_id" or "metadata.rows"');
    if (allowAny && v === ANY_FIELD) return v;
    if (!isFieldPath(v)) return void this.fail(path, `unknown field "${v}"; use one of ${EVENT_FIELDS.join(', ')}, metadata.<path> or enrichment.<path>`);
    return v;
  }

  fields(v: unknown, path: string): string[] | undefined {
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list) || list.length === 0 || list.length > LIMITS.groupByFields)
      return void this.fail(path, `must be a field path or a list of 1 to ${LIMITS.groupByFields} field paths`);
    const out = list.map((f, i) => this.field(f, Array.isArray(v) ? `${path}[${i}]` : path));
    return out.every((f) => f !== undefined) ? (out as string[]) : undefined;
  }

  match(v: unknown, path: string): MatchSpec | undefined {
    if (!isObject(v)) return void this.fail(path, 'must be an object {"event": "<type glob>", "where": <condition>}');
    this.known(v, path, ['event', 'where']);
    const globs = typeof v.event === 'string' ? [v.event] : v.event;
    let event: string[] | undefined;
    if (!Array.isArray(globs) || globs.length === 0 || globs.length > LIMITS.valuesPerList) {
      this.fail(join(path, 'event'), 'must be an event type glob (e.g. "custom.export.*") or a list of them');
    } else {
      event = [];
      globs.forEach((g, i) => {
        const at = Array.isArray(v.event) ? `${join(path, 'event')}[${i}]` : join(path, 'event');
        if (typeof g !== 'string' || !EVENT_GLOB.test(g)) this.fail(at, 'must be an event type glob of letters, digits, ".", "_", "-" and "*"');
        else event?.push(g);
      });
    }
    const where = v.where === undefined ? undefined : this.condition(v.where, join(path, 'where'), 0);
    if (!event) return undefined;
    return where === undefined ? { event } : { event, where };
  }

  condition(v: unknown, path: string, depth: number): Condition | undefined {
    if (depth > LIMITS.nestingDepth) return void this.fail(path, `conditions nest at most ${LIMITS.nestingDepth} deep`);
    if (!isObject(v)) return void this.fail(path, 'must be a condition object: {"field", "op", "value"}, {"all": [...]}, {"any": [...]} or {"not": {...}}');
    for (const group of ['all', 'any'] as const) {
      if (v[group] === undefined) continue;
      this.known(v, path, [group]);
      const list = v[group];
      if (!Array.isArray(list) || list.length === 0) return void this.fail(join(path, group), 'must be a non-empty list of conditions');
      const out = list.map((c, i) => this.condition(c, `${join(path, group)}[${i}]`, depth + 1));
      if (!out.every((c): c is Condition => c !== undefined)) return undefined;
      return group === 'all' ? { all: out } : { any: out };
    }
    if (v.not !== undefined) {
      this.known(v, path, ['not']);
      const inner = this.condition(v.not, join(path, 'not'), depth + 1);
      return inner && { not: inner };
    }
    return this.leaf(v, path);
  }

  leaf(v: Record<string, unknown>, path: string): FieldCondition | undefined {
    this.known(v, path, ['field', 'op', 'value', 'ignore_case', 'flags', 'compare']);
    if (++this.leaves === LIMITS.conditionsPerModel + 1) this.fail(path, `a model has at most ${LIMITS.conditionsPerModel} field conditions`);
    const op = v.op as ConditionOp;
    if (!CONDITION_OPS.includes(op)) return void this.fail(join(path, 'op'), `must be one of ${CONDITION_OPS.join(', ')}`);
    const field = this.field(v.field, join(path, 'field'), STRING_OPS.has(op) || op === 'in');
    const at = join(path, 'value');
    const value = v.value;
    if (v.ignore_case !== undefined && typeof v.ignore_case !== 'boolean') this.fail(join(path, 'ignore_case'), 'must be true or false');
    if (v.flags !== undefined && (op !== 'regex' || typeof v.flags !== 'string' || !/^[ims]{0,3}$/.test(v.flags)))
      this.fail(join(path, 'flags'), 'only a regex takes flags: any of "i", "m", "s"');
    if (v.compare !== undefined && (op !== 'fieldref' || !['equals', 'contains', 'startswith', 'endswith'].includes(v.compare as string)))
      this.fail(join(path, 'compare'), 'only fieldref takes compare: equals, contains, startswith or endswith');
    switch (op) {
      case 'equals':
        if (!isScalar(value)) this.fail(at, 'must be a string, number, boolean or null');
        else if (typeof value === 'string') this.pattern(value, at);
        break;
      case 'in':
        if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.valuesPerList)
          this.fail(at, `must be a list of 1 to ${LIMITS.valuesPerList} values`);
        else value.forEach((x, i) => (isScalar(x) ? typeof x === 'string' && this.pattern(x, `${at}[${i}]`) : this.fail(`${at}[${i}]`, 'must be a scalar')));
        break;
      case 'contains':
      case 'startswith':
      case 'endswith':
      case 'wildcard':
        if (typeof value !== 'string' || (value.length === 0 && op !== 'wildcard')) this.fail(at, 'must be a non-empty string');
        else this.pattern(value, at);
        break;
      case 'regex':
        if (typeof value !== 'string' || value.length === 0) this.fail(at, 'must be a regular expression (RE2 syntax)');
        // Past the model's instruction limit (already reported) the rest are not compiled: compiling is the cost being bounded.
        else if (this.pattern(value, at) && this.instructions <= LIMITS.modelInstructions) {
          const compiled = compileTenantRegex(value, (v.flags as string | undefined) ?? '');
          if (!compiled.ok) this.fail(at, compiled.message);
          else {
            const before = this.instructions;
            this.instructions += compiled.pattern.instructions;
            if (before <= LIMITS.modelInstructions && this.instructions > LIMITS.modelInstructions)
              this.fail(
                at,
                `the model's regular expressions compile to ${this.instructions} RE2 instructions so far, over the limit of ${LIMITS.modelInstructions} per model`,
              );
          }
        }
        break;
      case 'cidr': {
        const list = typeof value === 'string' ? [value] : value;
        if (!Array.isArray(list) || list.length === 0 || list.length > LIMITS.valuesPerList)
          this.fail(at, 'must be a CIDR such as "10.0.0.0/8" or a list of them');
        else
          list.forEach((c, i) => {
            if (typeof c !== 'string' || !isCidr(c))
              this.fail(Array.isArray(value) ? `${at}[${i}]` : at, `"${String(c)}" is not a CIDR (address/prefix, such as 10.0.0.0/8 or 2001:db8::/32)`);
          });
        break;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(at, 'must be a number');
        break;
      case 'exists':
        if (typeof value !== 'boolean') this.fail(at, 'must be true or false');
        break;
      case 'fieldref':
        this.field(value, at);
        break;
    }
    if (!field) return undefined;
    if (NUMBER_OPS.has(op) && field === ANY_FIELD) return void this.fail(join(path, 'field'), 'a number comparison needs one field');
    const out: Record<string, unknown> = { field, op };
    if (value !== undefined) out.value = value;
    for (const k of ['ignore_case', 'flags', 'compare'] as const) if (v[k] !== undefined) out[k] = v[k];
    return out as unknown as FieldCondition;
  }

  pattern(value: string, at: string): boolean {
    if (value.length > LIMITS.patternLength) {
      this.fail(at, `must be at most ${LIMITS.patternLength} characters (has ${value.length})`);
      return false;
    }
    return true;
  }

  threshold(v: unknown, path: string): ThresholdSpec | undefined {
    if (!isObject(v)) return void this.fail(path, 'must be an object {"count", "window_seconds", "group_by"?, "distinct"?}');
    this.known(v, path, ['count', 'distinct', 'group_by', 'window_seconds']);
    const distinct = v.distinct === undefined ? undefined : this.field(v.distinct, join(path, 'distinct'));
    const max = v.distinct === undefined ? LIMITS.thresholdCount : LIMITS.distinctCount;
    const count = this.integer(v.count, join(path, 'count'), 1, max);
    const window = this.integer(v.window_seconds, join(path, 'window_seconds'), 1, LIMITS.windowSeconds);
    const groupBy = v.group_by === undefined ? undefined : this.fields(v.group_by, join(path, 'group_by'));
    if (count === undefined || window === undefined) return undefined;
    return { count, ...(distinct ? { distinct } : {}), ...(groupBy ? { group_by: groupBy } : {}), window_seconds: window };
  }

  sequence(v: unknown, path: string): SequenceSpec | undefined {
    if (!isObject(v)) return void this.fail(path, 'must be an object {"then": [match, ...], "window_seconds", "group_by"?, "ordered"?}');
    this.known(v, path, ['then', 'ordered', 'group_by', 'window_seconds']);
    const steps = v.then;
    let then: MatchSpec[] | undefined;
    if (!Array.isArray(steps) || steps.length === 0 || steps.length > LIMITS.sequenceSteps - 1)
      this.fail(join(path, 'then'), `must list 1 to ${LIMITS.sequenceSteps - 1} matches that follow "match"`);
    else {
      const out = steps.map((s, i) => this.match(s, `${join(path, 'then')}[${i}]`));
      if (out.every((m) => m !== undefined)) then = out as MatchSpec[];
    }
    if (v.ordered !== undefined && typeof v.ordered !== 'boolean') this.fail(join(path, 'ordered'), 'must be true or false');
    const window = this.integer(v.window_seconds, join(path, 'window_seconds'), 1, LIMITS.windowSeconds);
    const groupBy = v.group_by === undefined ? undefined : this.fields(v.group_by, join(path, 'group_by'));
    if (!then || window === undefined) return undefined;
    return { then, ordered: v.ordered !== false, ...(groupBy ? { group_by: groupBy } : {}), window_seconds: window };
  }

  outcome(v: unknown, path: string): Outcome | undefined {
    if (!isObject(v)) return void this.fail(path, 'must be an object {"alert": "custom.<name>", "severity", "points"?, "tags"?}');
    this.known(v, path, ['alert', 'severity', 'points', 'tags']);
    let ok = true;
    if (typeof v.alert !== 'string' || !ALERT_TYPE.test(v.alert)) {
      this.fail(join(path, 'alert'), 'must be an alert type "custom.<name>" of lowercase letters, digits and "_" (up to 3 names after custom.)');
      ok = false;
    }
    if (!SEVERITIES.includes(v.severity as Severity)) {
      this.fail(join(path, 'severity'), `must be one of ${SEVERITIES.join(', ')}`);
      ok = false;
    }
    // An outcome that names no points adds what a built-in alert of its severity adds.
    const points = v.points === undefined ? SEVERITY_WEIGHTS[v.severity as Severity] : this.integer(v.points, join(path, 'points'), 0, LIMITS.points);
    const tags = v.tags ?? [];
    if (!Array.isArray(tags) || tags.length > LIMITS.tags) {
      this.fail(join(path, 'tags'), `must be a list of at most ${LIMITS.tags} tags`);
      ok = false;
    } else
      tags.forEach((t, i) => {
        if (typeof t !== 'string' || !/^[A-Za-z0-9_.:-]+$/.test(t) || t.length > LIMITS.tagLength) {
          this.fail(`${join(path, 'tags')}[${i}]`, `must be a tag of letters, digits, "_", ".", ":" and "-", at most ${LIMITS.tagLength} characters`);
          ok = false;
        }
      });
    if (!ok || points === undefined) return undefined;
    return { alert: v.alert as string, severity: v.severity as Severity, points, tags: tags as string[] };
  }
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/**
 * An address and a prefix length, read by the service's one IP parser (as allowlists read them):
 * `010.0.0.0/8`, `10.1/16` and `0x0a.0.0.0/8` are refused. A bare address is not a CIDR here.
 */
export const isCidr = (text: string): boolean => text.includes('/') && parseCidr(text) !== undefined;

/** Validates a native model body; the answer is the normalised definition or every problem found. */
export function validateModel(body: unknown): Validation<ThreatModelDefinition> {
  const c = new Checker();
  if (!isObject(body)) return { ok: false, errors: [{ field: '(body)', message: 'a threat model must be a JSON object' }] };
  c.known(body, '', ['name', 'enabled', 'description', 'match', 'threshold', 'sequence', 'outcome']);
  const name = c.string(body.name, 'name', LIMITS.nameLength);
  const description = c.string(body.description, 'description', LIMITS.descriptionLength, false);
  if (body.enabled !== undefined && typeof body.enabled !== 'boolean') c.fail('enabled', 'must be true or false');
  const match = c.match(body.match, 'match');
  const threshold = body.threshold === undefined || body.threshold === null ? undefined : c.threshold(body.threshold, 'threshold');
  const sequence = body.sequence === undefined || body.sequence === null ? undefined : c.sequence(body.sequence, 'sequence');
  if (threshold && sequence) c.fail('sequence', 'a model has a threshold or a sequence, not both');
  const outcome = c.outcome(body.outcome, 'outcome');
  if (c.errors.length > 0 || !name || !match || !outcome) return { ok: false, errors: c.errors };
  const value: ThreatModelDefinition = {
    name,
    enabled: body.enabled !== false,
    ...(description !== undefined ? { description } : {}),
    match,
    ...(threshold ? { threshold } : {}),
    ...(sequence ? { sequence } : {}),
    outcome,
  };
  const memoryBytes = compileModel('check', 0, value).memoryBytes;
  if (memoryBytes > LIMITS.modelMemoryBytes)
    return {
      ok: false,
      errors: [
        {
          field: 'match',
          message: `the model's patterns compile to about ${kib(memoryBytes)} KiB, over the limit of ${kib(LIMITS.modelMemoryBytes)} KiB per model: use fewer or simpler regular expressions`,
        },
      ],
    };
  return { ok: true, value };
}

const kib = (bytes: number): number => Math.ceil(bytes / 1024);
