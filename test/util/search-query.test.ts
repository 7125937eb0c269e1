import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALERT_FIELDS, EVENT_FIELDS, parseQuery, QUERY_LIMITS, type QueryNode } from '../../src/util/search-query.js';

const read = (q: string): QueryNode | null => {
  const r = parseQuery(q, EVENT_FIELDS);
  if (!r.ok) throw new Error(`${r.message} at position ${r.position}`);
  return r.query;
};
const problem = (q: string, fields = EVENT_FIELDS): { position: number; message: string } => {
  const r = parseQuery(q, fields);
  if (r.ok) throw new Error(`read ${q}`);
  return r;
};

/** The number of nodes of a tree, and its depth. */
function size(node: QueryNode | null): { nodes: number; depth: number } {
  if (node === null) return { nodes: 0, depth: 0 };
  if (node.kind === 'and' || node.kind === 'or') {
    const parts = node.items.map(size);
    return { nodes: 1 + parts.reduce((s, p) => s + p.nodes, 0), depth: 1 + Math.max(...parts.map((p) => p.depth)) };
  }
  if (node.kind === 'not') {
    const inner = size(node.item);
    return { nodes: 1 + inner.nodes, depth: 1 + inner.depth };
  }
  return { nodes: 1, depth: 1 };
}

describe('search query language', () => {
  it('reads field tests, free text, and the operators with NOT over AND over OR', () => {
    expect(read('')).toBeNull();
    expect(read('  ')).toBeNull();
    expect(read('actor_id:dana')).toEqual({ kind: 'field', field: 'actor_id', fieldKind: 'text', test: { op: 'equals', value: 'dana' } });
    expect(read('email:"a b"')).toMatchObject({ test: { op: 'equals', value: 'a b' } });
    expect(read('actor_id:dana*')).toMatchObject({
      test: {
        op: 'pattern',
        parts: [
          { wildcard: null, text: 'dana' },
          { wildcard: '*', text: '' },
        ],
      },
    });
    expect(read('actor_id:**a')).toMatchObject({ test: { op: 'pattern', parts: [{ wildcard: '*' }, { text: 'a' }] } });
    expect(read('Wire.Transfer')).toEqual({ kind: 'text', text: 'Wire.Transfer', words: ['wire', 'transfer'], prefix: false });
    expect(read('transf*')).toMatchObject({ kind: 'text', words: ['transf'], prefix: true });
    expect(read('a b OR c')).toMatchObject({ kind: 'or', items: [{ kind: 'and' }, { kind: 'text', words: ['c'] }] });
    expect(read('a AND b')).toMatchObject({ kind: 'and', items: [{ kind: 'text' }, { kind: 'text' }] });
    expect(read('-a NOT b')).toMatchObject({ kind: 'and', items: [{ kind: 'not' }, { kind: 'not' }] });
    expect(read('(a OR b) c')).toMatchObject({ kind: 'and', items: [{ kind: 'or' }, { kind: 'text' }] });
    // Lower-case operators are words.
    expect(read('a or b')).toMatchObject({ kind: 'and', items: [{}, { words: ['or'] }, {}] });
  });

  it('reads ranges, times, addresses and blocks', () => {
    expect(read('risk:>=70')).toMatchObject({ test: { op: 'range', low: { value: 70, inclusive: true } } });
    expect(read('risk:<5')).toMatchObject({ test: { op: 'range', high: { value: 5, inclusive: false } } });
    expect(read('risk:[40 TO 80]')).toMatchObject({ test: { op: 'range', low: { value: 40, inclusive: true }, high: { value: 80, inclusive: true } } });
    expect(read('risk:{40 TO *]')).toEqual({ kind: 'field', field: 'risk', fieldKind: 'number', test: { op: 'range', low: { value: 40, inclusive: false } } });
    const day = Date.parse('2026-12-01');
    expect(read('occurred_at:2026-12-01')).toMatchObject({ test: { op: 'range', low: { value: day }, high: { value: day + 86_400_000, inclusive: false } } });
    expect(read('occurred_at:>2026-12-01T10:00Z')).toMatchObject({ test: { low: { value: Date.parse('2026-12-01T10:00Z'), inclusive: false } } });
    expect(read('ip:10.0.0.0/8')).toMatchObject({ test: { op: 'cidr', version: 4, block: '10.0.0.0/8' } });
    expect(read('ip:2001:DB8:0::1')).toMatchObject({ test: { op: 'equals', value: '2001:db8::1' } });
    expect(read('metadata.plan:gold')).toMatchObject({ field: 'metadata.plan', fieldKind: 'text' });
    expect(parseQuery('severity:>=high', ALERT_FIELDS)).toMatchObject({ ok: true, query: { test: { op: 'range', low: { value: 3 } } } });
  });

  it('answers the position of the first problem', () => {
    expect(problem('actor_id:')).toMatchObject({ position: 10 });
    expect(problem('a (b')).toMatchObject({ position: 3 });
    expect(problem('nope:1')).toMatchObject({ position: 1, message: 'unknown field nope' });
    expect(problem('metadata:1')).toMatchObject({ position: 1 });
    expect(problem('a *b')).toMatchObject({ position: 3 });
    expect(problem('severity:urgent', ALERT_FIELDS)).toMatchObject({ position: 10 });
    expect(problem('risk:1*')).toMatchObject({ message: 'risk takes no wildcards' });
    expect(problem('x'.repeat(QUERY_LIMITS.length + 1))).toMatchObject({ position: QUERY_LIMITS.length + 1 });
  });

  it('never throws, and answers a tree within the bounds or a position inside the query', () => {
    const alphabet = fc.constantFrom(
      ...'ab:*?"()[]{} -\\/.>=<TOANDORNOT1'.split(''),
      'AND ',
      'OR ',
      'NOT ',
      'actor_id:',
      'risk:',
      'ip:',
      ' TO ',
      '\u0000',
      'é',
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 300 }), (chars) => {
        const q = chars.join('');
        const r = parseQuery(q, EVENT_FIELDS);
        if (r.ok) {
          const { nodes, depth } = size(r.query);
          // Each term is a leaf; operators add at most one node per term, negations at most the depth.
          expect(nodes).toBeLessThanOrEqual(QUERY_LIMITS.terms * (2 + QUERY_LIMITS.depth));
          expect(depth).toBeLessThanOrEqual(2 * QUERY_LIMITS.depth + 3);
        } else {
          expect(r.position).toBeGreaterThanOrEqual(1);
          expect(r.position).toBeLessThanOrEqual(Math.max(q.length, 1) + 1);
          expect(r.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads any text of the longest length without throwing', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: QUERY_LIMITS.length + 20, unit: 'binary' }), (q) => {
        const r = parseQuery(q, EVENT_FIELDS);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 150 },
    );
  });
});
