/**
 * Turns a validated definition into closures, once per model version: field paths become
 * getters, patterns become RE2 programs or plain string tests, CIDRs are parsed. Evaluating an
 * event then costs only the tests themselves, and each test charges its worst-case work to the
 * event's WorkMeter before it runs (budget.ts): a test the meter refuses is not run and does not
 * match.
 */
import { SECOND_MS } from '../util/duration.js';
import { cidrContains, parseAddress, parseCidr } from '../util/ip.js';
import { compileGlob, compileTenantRegex, wildcardParts, type PatternResult } from '../util/tenant-pattern.js';
import { DEFAULT_ALERT_WINDOW_SECONDS, LIMITS, type Condition, type FieldCondition, type MatchSpec, type ThreatModelDefinition } from './model.js';
import type { WorkMeter } from './budget.js';
import type { EventView } from './event-view.js';

export type Predicate = (view: EventView) => boolean;
/** Tests one value of a field, charging its work to the event's meter first (see budget.ts). */
type ValueTest = (value: unknown, meter: WorkMeter) => boolean;

export interface CompiledStep {
  /** Whether the step's event globs match the type; a glob's work is charged to the meter. */
  readonly type: (eventType: string, meter: WorkMeter) => boolean;
  readonly where: Predicate | undefined;
}

export interface CompiledModel {
  readonly id: string;
  readonly version: number;
  readonly definition: ThreatModelDefinition;
  /** `match` first, then the sequence's `then` steps. */
  readonly steps: readonly CompiledStep[];
  readonly kind: 'single' | 'count' | 'distinct' | 'sequence' | 'unordered';
  readonly count: number;
  readonly windowMs: number;
  readonly groupBy: readonly string[];
  readonly distinct: string | undefined;
  /** Estimated heap the compiled model keeps (its patterns' programs and caches). */
  readonly memoryBytes: number;
  /** What evaluating this model has cost in the current measurement window (cost-watch.ts). */
  readonly usage: ModelUsage;
}

/** Counters kept on the compiled model itself, so measuring a model costs no lookup per event. */
export interface ModelUsage {
  /** Wall time spent evaluating the model, in microseconds. */
  micros: number;
  /** Events whose work budget ran out with this model the one that asked for most of it. */
  exhausted: number;
  /** What evaluating the model threw, the first time it did (the model is then suspended). */
  failure?: string;
}

/** What compiling one model has cost so far. */
interface CompileCost {
  memoryBytes: number;
  /** RE2 instructions of the model's regular expressions so far. */
  instructions: number;
}

const newCost = (): CompileCost => ({ memoryBytes: 0, instructions: 0 });

/**
 * A pattern that passed validation; one that does not compile here is a defect, not an input
 * error. A model stored under looser limits than today's (an older version of the service) stops
 * compiling once its regular expressions pass the per-model instruction limit: the registry then
 * skips it rather than spend the request thread on it.
 */
function compiledPattern<T extends { readonly memoryBytes: number; readonly instructions?: number }>(result: PatternResult<T>, cost: CompileCost): T {
  if (!result.ok) throw new Error(result.message);
  cost.memoryBytes += result.pattern.memoryBytes;
  cost.instructions += result.pattern.instructions ?? 0;
  if (cost.instructions > LIMITS.modelInstructions)
    throw new Error(`the model's regular expressions compile to more than ${LIMITS.modelInstructions} RE2 instructions, over the limit per model`);
  return result.pattern;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

/** Numeric text is read whole (trimmed and parsed): charged its length like a string test. */
function toNumber(v: unknown, meter: WorkMeter): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && meter.charge(v.length + 1) && v.trim() !== '') return Number(v);
  return NaN;
}

/** A field holding a list matches when any element does. */
const anyOf =
  (test: ValueTest): ValueTest =>
  (v, meter) => {
    if (!Array.isArray(v)) return test(v, meter);
    for (const item of v as unknown[]) if (test(item, meter)) return true;
    return false;
  };

type StringOp = 'equals' | 'contains' | 'startswith' | 'endswith';

/**
 * Compares text with what a test expects. Its work is linear in both (folding the case reads the
 * text once more), so it is charged their lengths.
 */
function compareText(op: StringOp, s: string, want: string, ignoreCase: boolean, meter: WorkMeter): boolean {
  if (!meter.charge(s.length + want.length + 1)) return false;
  const have = ignoreCase ? s.toLowerCase() : s;
  switch (op) {
    case 'equals':
      return have === want;
    case 'contains':
      return have.includes(want);
    case 'startswith':
      return have.startsWith(want);
    case 'endswith':
      return have.endsWith(want);
  }
}

function stringTest(op: StringOp, expected: string, ignoreCase: boolean): ValueTest {
  const want = ignoreCase ? expected.toLowerCase() : expected;
  return (v, meter) => {
    const s = text(v);
    return s !== undefined && compareText(op, s, want, ignoreCase, meter);
  };
}

function scalarEquals(expected: unknown, ignoreCase: boolean): ValueTest {
  if (expected === null) return (v) => v === null || v === undefined;
  if (typeof expected === 'number') return (v, meter) => v === expected || (typeof v === 'string' && toNumber(v, meter) === expected);
  if (typeof expected === 'boolean') {
    const want = String(expected);
    return (v, meter) => v === expected || (typeof v === 'string' && compareText('equals', v, want, true, meter));
  }
  return stringTest('equals', expected as string, ignoreCase);
}

/** Wildcard patterns of the common shapes compare strings directly; the rest run on the glob matcher. */
function wildcardTest(pattern: string, ignoreCase: boolean, cost: CompileCost): ValueTest {
  const parts = wildcardParts(pattern);
  const literal = (p: (typeof parts)[number] | undefined) => p !== undefined && p.wildcard === null;
  const star = (p: (typeof parts)[number] | undefined) => p !== undefined && p.wildcard === '*';
  if (parts.length === 0) return stringTest('equals', '', false);
  if (parts.length === 1 && literal(parts[0])) return stringTest('equals', parts[0]?.text as string, ignoreCase);
  if (parts.length === 1 && star(parts[0])) return (v) => text(v) !== undefined;
  if (parts.length === 2 && literal(parts[0]) && star(parts[1])) return stringTest('startswith', parts[0]?.text as string, ignoreCase);
  if (parts.length === 2 && star(parts[0]) && literal(parts[1])) return stringTest('endswith', parts[1]?.text as string, ignoreCase);
  if (parts.length === 3 && star(parts[0]) && literal(parts[1]) && star(parts[2])) return stringTest('contains', parts[1]?.text as string, ignoreCase);
  const glob = compiledPattern(compileGlob(pattern, { single: true, escapes: true, ignoreCase }), cost);
  // The glob matcher's work is at most its size per character of text.
  const size = glob.size + 1;
  return (v, meter) => {
    const s = text(v);
    return s !== undefined && meter.charge(size * (s.length + 1)) && glob.test(s);
  };
}

/**
 * Addresses and ranges are read by the service's one IP parser, as allowlists and limits read
 * them: `010.0.0.1`, `10.1` and `0x0a.0.0.1` are no addresses, so they match no range.
 */
function cidrTest(list: readonly string[]): ValueTest {
  const ranges = list.map((c) => {
    const range = parseCidr(c);
    if (range === undefined) throw new Error(`"${c}" is not a CIDR`);
    return range;
  });
  return (v) => {
    if (typeof v !== 'string') return false;
    const address = parseAddress(v);
    if (address === undefined) return false;
    for (const range of ranges) if (cidrContains(range, address)) return true;
    return false;
  };
}

function valueTest(c: FieldCondition, cost: CompileCost): ValueTest {
  const ic = c.ignore_case === true;
  switch (c.op) {
    case 'equals':
      return scalarEquals(c.value, ic);
    case 'in': {
      const tests = (c.value as unknown[]).map((x) => scalarEquals(x, ic));
      return (v, meter) => {
        for (const t of tests) if (t(v, meter)) return true;
        return false;
      };
    }
    case 'contains':
    case 'startswith':
    case 'endswith':
      return stringTest(c.op, c.value as string, ic);
    case 'wildcard':
      return wildcardTest(c.value as string, ic, cost);
    case 'regex': {
      const regex = compiledPattern(compileTenantRegex(c.value as string, `${c.flags ?? ''}${ic ? 'i' : ''}`), cost);
      // RE2 does at most its program's instructions of work per character: charged before it runs,
      // since nothing can stop a match once it has started.
      const perCharacter = regex.instructions;
      return (v, meter) => {
        const s = text(v);
        return s !== undefined && meter.charge(perCharacter * (s.length + 1)) && regex.test(s);
      };
    }
    case 'cidr':
      return cidrTest(typeof c.value === 'string' ? [c.value] : (c.value as string[]));
    case 'gt':
      return (v, meter) => toNumber(v, meter) > (c.value as number);
    case 'gte':
      return (v, meter) => toNumber(v, meter) >= (c.value as number);
    case 'lt':
      return (v, meter) => toNumber(v, meter) < (c.value as number);
    case 'lte':
      return (v, meter) => toNumber(v, meter) <= (c.value as number);
    case 'exists':
    case 'fieldref':
      throw new Error(`${c.op} reads the whole field`);
  }
}

function compileLeaf(c: FieldCondition, cost: CompileCost): Predicate {
  if (c.op === 'exists') {
    const want = c.value === true;
    return (view) => {
      const v = view.get(c.field);
      return (v !== undefined && v !== null) === want;
    };
  }
  if (c.op === 'fieldref') {
    const other = c.value as string;
    const ic = c.ignore_case === true;
    const compare = c.compare ?? 'equals';
    return (view) => {
      const found = text(view.get(other));
      if (found === undefined) return false;
      const ref = ic ? found.toLowerCase() : found;
      const v = view.get(c.field);
      if (!Array.isArray(v)) {
        const s = text(v);
        return s !== undefined && compareText(compare, s, ref, ic, view.meter);
      }
      for (const item of v as unknown[]) {
        const s = text(item);
        if (s !== undefined && compareText(compare, s, ref, ic, view.meter)) return true;
      }
      return false;
    };
  }
  const test = valueTest(c, cost);
  // equals null is "missing or null": a missing field must reach the test itself.
  if (c.op === 'equals' && c.value === null) return (view) => test(view.get(c.field), view.meter);
  if (c.field === '*')
    return (view) => {
      for (const v of view.keywordValues()) if (test(v, view.meter)) return true;
      return false;
    };
  const listed = anyOf(test);
  return (view) => listed(view.get(c.field), view.meter);
}

export function compileCondition(c: Condition, cost: CompileCost = newCost()): Predicate {
  // Plain loops: a callback passed to every() or some() would be a closure made per event.
  if ('all' in c) {
    const parts = c.all.map((part) => compileCondition(part, cost));
    return (view) => {
      for (const p of parts) if (!p(view)) return false;
      return true;
    };
  }
  if ('any' in c) {
    const parts = c.any.map((part) => compileCondition(part, cost));
    return (view) => {
      for (const p of parts) if (p(view)) return true;
      return false;
    };
  }
  if ('not' in c) {
    const inner = compileCondition(c.not, cost);
    return (view) => !inner(view);
  }
  return compileLeaf(c, cost);
}

/** Event type globs: `*` alone, exact names and `prefix.*` are plain string tests; the rest are charged. */
export function compileTypeGlobs(globs: readonly string[], cost: CompileCost = newCost()): (eventType: string, meter: WorkMeter) => boolean {
  if (globs.includes('*')) return () => true;
  const exact = new Set(globs.filter((g) => !g.includes('*')));
  const prefixes = globs.filter((g) => g.endsWith('*') && g.indexOf('*') === g.length - 1).map((g) => g.slice(0, -1));
  const others = globs
    .filter((g) => g.includes('*') && !(g.endsWith('*') && g.indexOf('*') === g.length - 1))
    .map((g) => compiledPattern(compileGlob(g, { single: true, escapes: true }), cost));
  const plain = (t: string): boolean => {
    if (exact.has(t)) return true;
    for (const p of prefixes) if (t.startsWith(p)) return true;
    return false;
  };
  if (others.length === 0) return plain;
  return (t, meter) => {
    if (plain(t)) return true;
    for (const r of others) if (meter.charge((r.size + 1) * (t.length + 1)) && r.test(t)) return true;
    return false;
  };
}

function compileStep(m: MatchSpec, cost: CompileCost): CompiledStep {
  return { type: compileTypeGlobs(m.event, cost), where: m.where === undefined ? undefined : compileCondition(m.where, cost) };
}

/** The closures and records of a model apart from its patterns. */
const MODEL_BASE_BYTES = 4 * 1024;

export function compileModel(id: string, version: number, d: ThreatModelDefinition): CompiledModel {
  const cost = newCost();
  const steps = [d.match, ...(d.sequence?.then ?? [])].map((step) => compileStep(step, cost));
  const seconds = d.threshold?.window_seconds ?? d.sequence?.window_seconds ?? DEFAULT_ALERT_WINDOW_SECONDS;
  const kind = d.sequence ? (d.sequence.ordered ? 'sequence' : 'unordered') : d.threshold ? (d.threshold.distinct ? 'distinct' : 'count') : 'single';
  return {
    id,
    version,
    definition: d,
    steps,
    kind,
    count: d.threshold?.count ?? steps.length,
    windowMs: seconds * SECOND_MS,
    groupBy: d.threshold?.group_by ?? d.sequence?.group_by ?? [],
    distinct: d.threshold?.distinct,
    memoryBytes: MODEL_BASE_BYTES + cost.memoryBytes,
    usage: { micros: 0, exhausted: 0 },
  };
}

export function stepMatches(step: CompiledStep, view: EventView): boolean {
  return step.type(view.type, view.meter) && (step.where === undefined || step.where(view));
}
