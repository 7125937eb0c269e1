/**
 * The matchers for tenant text: the glob matcher agrees with RE2 on what matches, and no pattern
 * a tenant can write — globs, Sigma conditions, regular expressions — compiles or matches in
 * more than a bounded time on long hostile text. The time bounds are two orders of magnitude
 * above what a linear matcher needs, and orders of magnitude below what a backtracking one takes.
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { translateSigma } from '../../src/threat-models/sigma.js';
import { compileGlob, compileTenantRegex, GlobCache, limitDfaMemory, PATTERN_LIMITS, quoteRegex, wildcardParts } from '../../src/util/tenant-pattern.js';

/** The same glob as an anchored RE2 pattern: the reference the matcher is checked against. */
function referenceRegex(pattern: string, single: boolean, escapes: boolean, ignoreCase: boolean): RE2JS {
  let source = '';
  const parts = escapes
    ? wildcardParts(pattern)
    : [...pattern].map((c) =>
        c === '*' ? { wildcard: '*' as const, text: '' } : c === '?' && single ? { wildcard: '?' as const, text: '' } : { wildcard: null, text: c },
      );
  for (const part of parts) {
    if (part.wildcard === '*') source += '.*';
    else if (part.wildcard === '?') source += single ? '.' : quoteRegex('?');
    else source += quoteRegex(part.text);
  }
  return RE2JS.compile(`^(?:${source})$`, RE2JS.DOTALL | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
}

const elapsed = (work: () => void): number => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

const alphabet = fc.constantFrom('a', 'b', 'A', '.', '*', '?', '\\', 'é', '😀');
const globText = fc.array(alphabet, { maxLength: 12 }).map((cs) => cs.join(''));
const subjectText = fc.array(fc.constantFrom('a', 'b', 'A', '.', '?', '*', '\\', 'é', '😀', '\n'), { maxLength: 16 }).map((cs) => cs.join(''));

describe('globs', () => {
  it('match exactly what the equivalent RE2 pattern matches', () => {
    fc.assert(
      fc.property(globText, subjectText, fc.boolean(), fc.boolean(), fc.boolean(), (pattern, text, single, escapes, ignoreCase) => {
        const compiled = compileGlob(pattern, { single, escapes, ignoreCase });
        expect(compiled.ok).toBe(true);
        if (!compiled.ok) return;
        // Case folding differs between toLowerCase and RE2 outside ASCII; compare on ASCII letters only.
        if (ignoreCase && [...pattern, ...text].some((c) => c.charCodeAt(0) > 0x7f)) return;
        expect(compiled.pattern.test(text)).toBe(referenceRegex(pattern, single, escapes, ignoreCase).matches(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('collapse runs of stars and stay bounded on the inputs that make backtracking matchers explode', () => {
    const stars = compileGlob(`${'*'.repeat(500)}Z`);
    expect(stars.ok && stars.pattern.size).toBe(2);
    const worst = [`${'*a'.repeat(255)}Z`, `${'*'.repeat(511)}Z`, `a*${'?'.repeat(250)}*b`, `${'*ab'.repeat(170)}`];
    const text = 'a'.repeat(10_000);
    for (const pattern of worst) {
      const glob = compileGlob(pattern, { single: true });
      expect(glob.ok).toBe(true);
      if (glob.ok) expect(elapsed(() => glob.pattern.test(text))).toBeLessThan(1_000);
    }
  });

  it('refuse a pattern over the length limit, and the cache answers no match for it', () => {
    const long = 'a'.repeat(PATTERN_LIMITS.patternLength + 1);
    expect(compileGlob(long).ok).toBe(false);
    expect(new GlobCache().matches(long, long)).toBe(false);
  });

  it('stay bounded for random star-heavy patterns and long texts (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('*', 'a', 'b', '?'), { minLength: 1, maxLength: PATTERN_LIMITS.patternLength }),
        fc.integer({ min: 1_000, max: 20_000 }),
        (chars, length) => {
          const glob = compileGlob(chars.join(''), { single: true });
          expect(glob.ok).toBe(true);
          if (glob.ok) expect(elapsed(() => glob.pattern.test('ab'.repeat(length / 2)))).toBeLessThan(1_000);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('regular expressions', () => {
  it('cap the program size and name the limit', () => {
    const refused = compileTenantRegex('(?:.{1,1000})q');
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toMatch(/over the limit of 2000 per pattern/);
    const accepted = compileTenantRegex('(?s)a.{0,998}[0-9]');
    expect(accepted.ok && accepted.pattern.instructions).toBe(2000);
    expect(compileTenantRegex('(a)\\1').ok).toBe(false);
    expect(compileTenantRegex('a', 'x').ok).toBe(false);
  });

  it('bound every pattern’s DFA cache below the engine’s default', () => {
    const regex = RE2JS.compile('[a-z]+@example\\.com');
    expect(limitDfaMemory(regex, PATTERN_LIMITS.regexDfaBytes)).toBe(true);
    const dfa = (regex as unknown as { re2Input: { dfa: { stateBudget: number; memBudget: number } } }).re2Input.dfa;
    expect(dfa.stateBudget).toBe(PATTERN_LIMITS.regexDfaBytes);
    expect(dfa.memBudget).toBeLessThanOrEqual(PATTERN_LIMITS.regexDfaBytes);
    // Still correct with the smaller cache, over text long enough to fill it many times.
    const bounded = compileTenantRegex('(?i)(union|select).{0,40}from');
    expect(bounded.ok).toBe(true);
    if (!bounded.ok) return;
    const noise = Array.from({ length: 5_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
    expect(bounded.pattern.test(noise)).toBe(false);
    expect(bounded.pattern.test(`${noise} UNION all SELECT x FROM t`)).toBe(true);
  });

  const atom = fc.constantFrom('a', 'b', '.', '\\d', '[a-z]', '(?:ab|ba)', '\\w', '\\s');
  const piece = fc.tuple(atom, fc.constantFrom('', '*', '+', '?', '{1,50}', '{0,300}', '{2}')).map(([a, q]) => a + q);
  const regexText = fc.array(piece, { minLength: 1, maxLength: 12 }).map((ps) => ps.join(''));

  it('compile within their limits or are refused, and match long text in bounded time (property)', () => {
    fc.assert(
      fc.property(regexText, fc.constantFrom('', 'i', 's', 'is'), (source, flags) => {
        let compiled: ReturnType<typeof compileTenantRegex> | undefined;
        expect(
          elapsed(() => {
            compiled = compileTenantRegex(source, flags);
          }),
        ).toBeLessThan(1_000);
        if (compiled === undefined || !compiled.ok) return;
        expect(compiled.pattern.instructions).toBeLessThanOrEqual(PATTERN_LIMITS.regexInstructions);
        const { pattern } = compiled;
        expect(elapsed(() => pattern.test(`${'ab1 '.repeat(500)}!`))).toBeLessThan(1_000);
      }),
      { numRuns: 200 },
    );
  });
});

describe('Sigma conditions', () => {
  const rule = (condition: string) =>
    [
      'title: t',
      'detection:',
      '  sel_a: {cs-method: GET}',
      '  sel_b: {cs-method: HEAD}',
      '  filter: {c-ip|cidr: 10.0.0.0/8}',
      `  condition: ${condition}`,
    ].join('\n');
  const token = fc.constantFrom('sel_a', 'sel_b', 'filter', 'and', 'or', 'not', '(', ')', '1 of sel_*', 'all of them', '1 of *', '1 of ****?*', 'x*');

  it('translate or are refused in bounded time, never throw (property)', () => {
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 400 }), (tokens) => {
        let result: ReturnType<typeof translateSigma> | undefined;
        expect(
          elapsed(() => {
            result = translateSigma(rule(tokens.join(' ')));
          }),
        ).toBeLessThan(1_000);
        expect(result?.ok === true || (result?.ok === false && result.errors.length > 0)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuse nesting past the bound with a clear reason', () => {
    const deep = translateSigma(rule(`${'('.repeat(5_000)}sel_a${')'.repeat(5_000)}`));
    expect(deep.ok).toBe(false);
    if (!deep.ok) expect(deep.errors[0]?.message).toMatch(/at most 32 deep/);
    const fine = translateSigma(rule(`${'('.repeat(5)}sel_a${')'.repeat(5)} and not filter`));
    expect(fine.ok).toBe(true);
  });
});
