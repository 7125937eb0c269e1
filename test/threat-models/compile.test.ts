/**
 * compile.ts on real definitions and events: each condition op, lists, keyword search, type
 * globs and what a compiled model records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileCondition, compileModel, compileTypeGlobs } from '../../src/threat-models/compile.js';
import { EventView } from '../../src/threat-models/event-view.js';
import type { Condition } from '../../src/threat-models/model.js';
import { validateModel } from '../../src/threat-models/validate.js';
import { MINUTE_MS } from '../../src/util/duration.js';
import { WorkMeter } from '../../src/threat-models/budget.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const view = (doc: Record<string, unknown>, type = 'custom.probe') => new EventView(type, T0, Object.assign({ event: type }, doc));
const matches = (condition: Condition, doc: Record<string, unknown>) => compileCondition(condition)(view(doc));

describe('field conditions', () => {
  it('equals compares strings, numbers as numbers or numeric text, booleans and null', () => {
    expect(matches({ field: 'actor_id', op: 'equals', value: 'root' }, { actor_id: 'root' })).toBe(true);
    expect(matches({ field: 'actor_id', op: 'equals', value: 'root' }, { actor_id: 'ROOT' })).toBe(false);
    expect(matches({ field: 'actor_id', op: 'equals', value: 'root', ignore_case: true }, { actor_id: 'ROOT' })).toBe(true);
    expect(matches({ field: 'metadata.n', op: 'equals', value: 3 }, { metadata: { n: '3' } })).toBe(true);
    expect(matches({ field: 'metadata.n', op: 'equals', value: 3 }, { metadata: { n: ' 3 ' } })).toBe(true);
    expect(matches({ field: 'metadata.n', op: 'equals', value: 3 }, { metadata: { n: '' } })).toBe(false);
    expect(matches({ field: 'metadata.b', op: 'equals', value: true }, { metadata: { b: 'TRUE' } })).toBe(true);
    expect(matches({ field: 'metadata.gone', op: 'equals', value: null }, { metadata: {} })).toBe(true);
    expect(matches({ field: 'metadata.gone', op: 'equals', value: null }, { metadata: { gone: 'x' } })).toBe(false);
  });

  it('in, contains, startswith and endswith, on a value or on any element of a list', () => {
    expect(matches({ field: 'metadata.role', op: 'in', value: ['admin', 'owner'] }, { metadata: { role: 'owner' } })).toBe(true);
    expect(matches({ field: 'metadata.role', op: 'in', value: ['admin', 'owner'] }, { metadata: { role: 'user' } })).toBe(false);
    expect(matches({ field: 'metadata.cmd', op: 'contains', value: 'passwd' }, { metadata: { cmd: 'cat /etc/passwd' } })).toBe(true);
    expect(matches({ field: 'metadata.cmd', op: 'startswith', value: 'cat' }, { metadata: { cmd: 'cat /etc/passwd' } })).toBe(true);
    expect(matches({ field: 'metadata.cmd', op: 'endswith', value: 'shadow' }, { metadata: { cmd: 'cat /etc/passwd' } })).toBe(false);
    expect(matches({ field: 'metadata.tags', op: 'equals', value: 'b' }, { metadata: { tags: ['a', 'b'] } })).toBe(true);
    expect(matches({ field: 'metadata.tags', op: 'equals', value: 'c' }, { metadata: { tags: ['a', 'b'] } })).toBe(false);
  });

  it('wildcard reads * and ? with \\ escapes, whatever shape the pattern has', () => {
    const wild = (value: string, text: string) => matches({ field: 'metadata.p', op: 'wildcard', value }, { metadata: { p: text } });
    expect(wild('/admin/*', '/admin/users')).toBe(true);
    expect(wild('*.php', '/x/shell.php')).toBe(true);
    expect(wild('*passwd*', '/etc/passwd-')).toBe(true);
    expect(wild('a?c', 'abc')).toBe(true);
    expect(wild('a?c', 'ac')).toBe(false);
    expect(wild('a\\*c', 'a*c')).toBe(true);
    expect(wild('a\\*c', 'abc')).toBe(false);
    expect(wild('*', 'anything')).toBe(true);
  });

  it('wildcard agrees with a reference matcher on any text and pattern of a small alphabet', () => {
    const reference = (pattern: string, text: string): boolean => {
      // Plain dynamic programming over the pattern: * any run, ? one character.
      let row = [true, ...Array.from({ length: text.length }, () => false)];
      for (const p of pattern) {
        const next = [p === '*' && row[0] === true];
        for (let i = 1; i <= text.length; i++)
          next[i] = p === '*' ? (row[i] as boolean) || (next[i - 1] as boolean) : (row[i - 1] as boolean) && (p === '?' || p === text[i - 1]);
        row = next;
      }
      return row[text.length] as boolean;
    };
    fc.assert(
      fc.property(fc.stringMatching(/^[ab*?]{0,8}$/), fc.stringMatching(/^[ab]{0,10}$/), (pattern, text) => {
        expect(matches({ field: 'metadata.p', op: 'wildcard', value: pattern }, { metadata: { p: text } })).toBe(reference(pattern, text));
      }),
    );
  });

  it('regex runs on RE2 with the flags given', () => {
    expect(matches({ field: 'user_agent', op: 'regex', value: '^sqlmap/\\d' }, { user_agent: 'sqlmap/1.7' })).toBe(true);
    expect(matches({ field: 'user_agent', op: 'regex', value: '^sqlmap' }, { user_agent: 'SQLMAP/1.7' })).toBe(false);
    expect(matches({ field: 'user_agent', op: 'regex', value: '^sqlmap', flags: 'i' }, { user_agent: 'SQLMAP/1.7' })).toBe(true);
  });

  it('cidr holds IPv4, IPv6 and IPv4-mapped addresses, and no legacy address form', () => {
    const cidr = (value: string | string[], ip: unknown) => matches({ field: 'ip', op: 'cidr', value }, { ip });
    expect(cidr('10.0.0.0/8', '10.1.2.3')).toBe(true);
    expect(cidr('10.0.0.0/8', '11.0.0.1')).toBe(false);
    expect(cidr(['192.168.0.0/16', '2001:db8::/32'], '2001:db8::1')).toBe(true);
    expect(cidr('10.0.0.0/8', '::ffff:10.0.0.1')).toBe(true);
    expect(cidr('10.0.0.0/8', 'fe80::1')).toBe(false);
    for (const legacy of ['010.0.0.1', '10.1', '0x0a.0.0.1', '10.0.0.1 ']) expect(cidr(['8.0.0.0/8', '10.0.0.0/8'], legacy), legacy).toBe(false);
    expect(cidr('10.0.0.0/8', 167772161)).toBe(false);
  });

  it('cidr agrees with prefix arithmetic on any IPv4 address and prefix', () => {
    const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), fc.integer({ min: 0, max: 32 }), (network, address, bits) => {
        const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        const inside = (network & mask) >>> 0 === (address & mask) >>> 0;
        expect(matches({ field: 'ip', op: 'cidr', value: `${dotted(network)}/${bits}` }, { ip: dotted(address) })).toBe(inside);
      }),
    );
  });

  it('number comparisons read numbers and numeric text, and nothing else', () => {
    expect(matches({ field: 'request.status', op: 'gte', value: 500 }, { request: { status: 503 } })).toBe(true);
    expect(matches({ field: 'request.status', op: 'lt', value: 500 }, { request: { status: '404' } })).toBe(true);
    expect(matches({ field: 'metadata.rows', op: 'gt', value: 1000 }, { metadata: { rows: 'many' } })).toBe(false);
    expect(matches({ field: 'metadata.rows', op: 'lte', value: 0 }, { metadata: {} })).toBe(false);
  });

  it('exists and fieldref read the whole field', () => {
    expect(matches({ field: 'email', op: 'exists', value: true }, { email: 'a@b.c' })).toBe(true);
    expect(matches({ field: 'email', op: 'exists', value: false }, { email: null })).toBe(true);
    expect(matches({ field: 'metadata.target', op: 'fieldref', value: 'actor_id' }, { actor_id: 'u1', metadata: { target: 'u1' } })).toBe(true);
    expect(matches({ field: 'metadata.target', op: 'fieldref', value: 'actor_id' }, { actor_id: 'u1', metadata: { target: 'u2' } })).toBe(false);
    expect(
      matches(
        { field: 'metadata.path', op: 'fieldref', value: 'actor_id', compare: 'contains', ignore_case: true },
        { actor_id: 'Bob', metadata: { path: '/home/bob/x' } },
      ),
    ).toBe(true);
  });

  it('a keyword condition (field "*") searches every value the sender gave, not enrichment', () => {
    const keyword: Condition = { field: '*', op: 'contains', value: 'mimikatz' };
    expect(matches(keyword, { metadata: { deep: { cmd: ['x', 'run mimikatz.exe'] } } })).toBe(true);
    expect(matches(keyword, { enrichment: { note: 'mimikatz' } })).toBe(false);
  });

  it('all, any and not combine conditions', () => {
    const admin: Condition = { field: 'metadata.role', op: 'equals', value: 'admin' };
    const night: Condition = { field: 'metadata.hour', op: 'lt', value: 6 };
    const doc = { metadata: { role: 'admin', hour: 3 } };
    expect(matches({ all: [admin, night] }, doc)).toBe(true);
    expect(matches({ all: [admin, { not: night }] }, doc)).toBe(false);
    expect(matches({ any: [{ not: admin }, night] }, doc)).toBe(true);
  });
});

describe('event type globs', () => {
  it('matches exact names, prefixes and other globs', () => {
    const meter = new WorkMeter();
    const test = compileTypeGlobs(['auth.login.failure', 'custom.export.*', 'api.*.denied']);
    expect(['auth.login.failure', 'custom.export.csv', 'api.keys.denied'].map((t) => test(t, meter))).toEqual([true, true, true]);
    expect(['auth.login.success', 'custom.exports', 'api.keys.allowed'].map((t) => test(t, meter))).toEqual([false, false, false]);
    expect(compileTypeGlobs(['*'])('anything', meter)).toBe(true);
  });
});

describe('compileModel', () => {
  const compiled = (body: Record<string, unknown>) => {
    const checked = validateModel(Object.assign({ name: 'm', outcome: { alert: 'custom.m', severity: 'low' } }, body));
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    return compileModel('tm_1', 3, checked.value);
  };

  it('records the kind, count, window and grouping of each model shape', () => {
    expect(compiled({ match: { event: 'custom.*' } })).toMatchObject({
      id: 'tm_1',
      version: 3,
      kind: 'single',
      count: 1,
      windowMs: 60 * MINUTE_MS,
      groupBy: [],
    });
    expect(compiled({ match: { event: 'custom.*' }, threshold: { count: 5, window_seconds: 300, group_by: 'ip' } })).toMatchObject({
      kind: 'count',
      count: 5,
      windowMs: 5 * MINUTE_MS,
      groupBy: ['ip'],
    });
    expect(compiled({ match: { event: 'custom.*' }, threshold: { count: 3, window_seconds: 60, distinct: 'ip', group_by: 'actor_id' } })).toMatchObject({
      kind: 'distinct',
      distinct: 'ip',
    });
    const sequence = compiled({ match: { event: 'custom.a' }, sequence: { then: [{ event: 'custom.b' }, { event: 'custom.c' }], window_seconds: 120 } });
    expect(sequence).toMatchObject({ kind: 'sequence', count: 3, windowMs: 2 * MINUTE_MS });
    expect(sequence.steps).toHaveLength(3);
    expect(compiled({ match: { event: 'custom.a' }, sequence: { then: [{ event: 'custom.b' }], ordered: false, window_seconds: 60 } }).kind).toBe('unordered');
  });

  it('counts the memory of its regular expressions', () => {
    const plain = compiled({ match: { event: 'custom.*', where: { field: 'actor_id', op: 'equals', value: 'x' } } });
    const regex = compiled({ match: { event: 'custom.*', where: { field: 'actor_id', op: 'regex', value: '^(?:a|b|c)[0-9]{2,8}x$' } } });
    expect(regex.memoryBytes).toBeGreaterThan(plain.memoryBytes);
  });
});
