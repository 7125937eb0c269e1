/**
 * The model checker reads tenant input on its own thread: the request thread keeps running while
 * a rule is parsed, a check past its time bound is refused and the next one runs on a new
 * thread, and an account has one check at a time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKER_LIMITS, ModelChecker, type CheckOutcome } from '../../src/threat-models/checker.js';

/** A Sigma rule whose YAML takes the parser a long time: a flow list of thousands of items (refused for its length once read). */
const SLOW_RULE = [
  'title: Long list',
  'detection:',
  `  sel: {cs-method: [${Array.from({ length: 6_000 }, (_, i) => `m${i}`).join(', ')}]}`,
  '  condition: sel',
].join('\n');
const RULE = 'title: Probe\ndetection:\n  sel: {cs-method: GET}\n  condition: sel';

const errorsOf = (outcome: CheckOutcome) => (outcome.ran && !outcome.result.ok ? outcome.result.errors : []);

describe('ModelChecker', () => {
  let checker: ModelChecker | undefined;
  afterEach(() => checker?.close());

  it('translates and validates a Sigma rule and a native model off the request thread', async () => {
    checker = new ModelChecker();
    const sigma = await checker.input('acc_a', { format: 'sigma', rule: RULE }, {});
    expect(sigma.ran && sigma.result.ok && sigma.result.value.source.format).toBe('sigma');
    const native = await checker.native('acc_a', { name: 'n', match: { event: ['custom.*'] }, outcome: { alert: 'custom.n', severity: 'low' } });
    expect(native.ran && native.result.ok && native.result.value.definition.name).toBe('n');
    const invalid = await checker.native('acc_a', { name: 'n' });
    expect(errorsOf(invalid).map((e) => e.field)).toContain('match');
  });

  it('keeps the request thread running while a slow rule is parsed', async () => {
    checker = new ModelChecker();
    await checker.input('acc_a', { format: 'sigma', rule: RULE }, {}); // the thread is up
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    const started = performance.now();
    const outcome = await checker.input('acc_a', { format: 'sigma', rule: SLOW_RULE }, {});
    const took = performance.now() - started;
    clearInterval(ticker);
    expect(errorsOf(outcome)[0]?.message).toMatch(/at most 256 values/);
    // A parse on this thread would have let no timer fire until it ended.
    expect(ticks).toBeGreaterThan(Math.min(5, took / 10));
  });

  it('refuses a check past its time bound and runs the next one on a new thread', async () => {
    checker = new ModelChecker({ ...CHECKER_LIMITS, maxMs: 1 });
    const slow = await checker.input('acc_a', { format: 'sigma', rule: `${SLOW_RULE}\n` }, {});
    expect(errorsOf(slow)[0]?.message).toMatch(/took longer than/);
    const roomy = new ModelChecker();
    try {
      const next = await roomy.input('acc_a', { format: 'sigma', rule: RULE }, {});
      expect(next.ran && next.result.ok).toBe(true);
    } finally {
      await roomy.close();
    }
  });

  it('runs one check per account at a time and answers busy to a second one', async () => {
    checker = new ModelChecker();
    const first = checker.input('acc_a', { format: 'sigma', rule: SLOW_RULE }, {});
    const second = await checker.input('acc_a', { format: 'sigma', rule: RULE }, {});
    const other = checker.input('acc_b', { format: 'sigma', rule: RULE }, {});
    expect(second).toEqual({ ran: false, busy: true });
    expect(errorsOf(await first)[0]?.message).toMatch(/at most 256 values/);
    const answered = await other;
    expect(answered.ran && answered.result.ok).toBe(true);
    // Once answered, the account may check again.
    expect((await checker.input('acc_a', { format: 'sigma', rule: RULE }, {})).ran).toBe(true);
  });
});
