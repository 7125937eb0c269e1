/**
 * Inputs built to trigger worst cases (quadratic scans, regex backtracking, deep recursion). They
 * are asserted on their result; a scanner that hangs fails through vitest's timeout.
 */
import { describe, expect, it } from 'vitest';
import { scanRequest } from '../../../src/enrichment/request-scan/index.js';
import { scanValue, SQLI, XSS, TRAVERSAL, CMDI, type ValueKind } from '../../../src/enrichment/request-scan/scan-value.js';

const SIZE = 100 * 1024;
const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

const cases: readonly (readonly [name: string, value: string, kind: ValueKind, expected: number])[] = [
  // SQL tokenizer and rules
  ['quotes', fill("'"), 'metadata', 0],
  ['open parens', fill('('), 'metadata', 0],
  ['close parens', fill(')'), 'metadata', 0],
  ['unterminated comments', fill('/*'), 'metadata', 0],
  ['versioned comments', fill('/*!'), 'metadata', 0],
  ['logic words', fill(' or'), 'metadata', 0],
  ['union without select', fill('union '), 'metadata', 0],
  ['quote-or pairs', fill("' or x"), 'metadata', 0],
  ['long digits', fill('1'), 'metadata', 0],
  ['tautology repeated', fill("' or 1=1 "), 'query', SQLI],
  // XSS scans
  ['tag openers without close', fill('<a '), 'metadata', 0],
  ['angle brackets', fill('<'), 'metadata', 0],
  ['handler-like words', fill('on'), 'metadata', 0],
  ['handler names without tag', fill(' onx='), 'metadata', 0],
  ['script words', fill('javascript'), 'metadata', 0],
  ['sink names', fill('xalert('), 'metadata', 0],
  ['svg with a huge attribute', `<svg ${'x'.repeat(SIZE)}`, 'metadata', 0],
  ['script tags', fill('<script>alert(1)</script>'), 'metadata', XSS],
  // traversal
  ['dot runs', fill('.'), 'metadata', 0],
  ['parent segments', fill('../'), 'path', TRAVERSAL],
  ['encoded dots', fill('%2e'), 'query', 0],
  // command injection
  ['semicolons', fill(';'), 'metadata', 0],
  ['pipes', fill('|'), 'query', 0],
  ['ampersands', fill('&&'), 'metadata', 0],
  ['substitution openers', fill('$('), 'metadata', 0],
  ['braces', fill('{'), 'metadata', 0],
  ['separator then spaces', `;${' '.repeat(SIZE)}`, 'query', 0],
  ['command chain', fill(';id'), 'query', CMDI],
  ['self segments', fill('/./'), 'metadata', 0],
  ['padded segments between names', fill('/././././x'), 'metadata', 0],
  ['hex-text dots', fill('0x2e'), 'query', 0],
  ['percent after dots', fill('..%'), 'metadata', 0],
  // JavaScript gadgets and escapes
  ['global owners without a close', fill('top['), 'metadata', 0],
  ['sink values', fill('(alert'), 'metadata', 0],
  ['escape openers', fill('\\u'), 'metadata', 0],
  ['unicode escapes', fill('\\u0061'), 'metadata', 0],
  ['tabs between letters', fill('j\ta'), 'metadata', 0],
  // code execution and command lines
  ['code calls without a command', fill("system('x"), 'metadata', 0],
  ['escaped newlines', fill('\\n'), 'query', 0],
  ['php openers', fill('<?php '), 'metadata', 0],
  ['command word then spaces', `ls${' '.repeat(SIZE)}`, 'metadata', 0],
  ['encoded line breaks', fill('%0a'), 'metadata', 0],
  // Markdown code spans
  ['backtick runs', fill('`'), 'query', 0],
  ['code spans around a command', fill(' `id` '), 'query', 0],
  ['quoted slashes in code spans', fill("`'/'` "), 'metadata', 0],
  ['substitution openers with backticks', fill('$(`'), 'metadata', 0],
  ['brace lists with a command', fill('{cat, '), 'metadata', 0],
  ['backtick substitutions glued to words', fill('a`id`'), 'query', CMDI],
  // decoding
  ['percent signs', fill('%'), 'query', 0],
  ['nested percent escapes', fill('%25'), 'query', 0],
  ['overlong lead bytes', fill('%c0'), 'query', 0],
  ['entity openers', fill('&#'), 'metadata', 0],
  ['nested entities', fill('&amp;'), 'metadata', 0],
  ['fullwidth text', fill('ｓ'), 'metadata', 0],
];

describe('adversarial 100 KB inputs finish with the right answer', () => {
  for (const [name, value, kind, expected] of cases) {
    it(`${name} (${kind})`, () => {
      expect(scanValue(value, kind)).toBe(expected);
    });
  }

  it('deeply nested metadata is walked only to the depth bound', () => {
    let deep: Record<string, unknown> = { note: "' or 1=1--" };
    for (let i = 0; i < 10_000; i++) deep = { child: deep };
    expect(scanRequest({ metadata: deep })).toEqual([]);
  });

  it('wide metadata is walked only to the node bound', () => {
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) wide[`k${i}`] = i === 99_999 ? "' or 1=1--" : 'hello';
    expect(scanRequest({ metadata: wide })).toEqual([]);
  });

  it('the total work per event is bounded: strings after the budget are not analysed', () => {
    const metadata: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) metadata[`body${i}`] = fill("it's fine (really); ");
    metadata.last = "' or 1=1--";
    expect(scanRequest({ metadata })).toEqual([]);
    expect(scanRequest({ metadata: { first: "' or 1=1--", ...metadata } })).toEqual([{ class: 'sql_injection', location: 'metadata.first' }]);
  });

  it('a query with 100k parameters is scanned only to the parameter bound', () => {
    const query = `${fill('a=b&')}x=%27%20or%201%3D1--`;
    expect(scanRequest({ query })).toEqual([]);
  });
});
