/**
 * Recall on payloads sampled from public fuzz lists, in a query string and in metadata, and false
 * positives on real traffic and form text. The tables are printed by bench/scan-quality.ts.
 */
import { describe, expect, it } from 'vitest';
import { scanRequest } from '../../../src/enrichment/request-scan/index.js';
import type { InjectionClass } from '../../../src/event/enrichment.js';
import { FUZZ_FILES, loadAttackFile, measureFalsePositives, measureRecall } from './fuzz-corpus.js';

const MIN_RECALL = 0.95;
const MAX_FALSE_POSITIVES = 0.005;
/** Each class's sample is large enough that one payload is under 1% of it. */
const MIN_PAYLOADS_PER_CLASS = 150;

describe('request scanner on public fuzz lists and real traffic', () => {
  const recall = measureRecall();
  const falsePositives = measureFalsePositives();

  it('has a sample of every class, each line attributed to a public list', () => {
    for (const file of Object.values(FUZZ_FILES)) {
      const { attacks, excluded } = loadAttackFile(file);
      expect(attacks.length, file).toBeGreaterThanOrEqual(MIN_PAYLOADS_PER_CLASS);
      for (const p of [...attacks, ...excluded]) expect(p.source, `${file}: ${p.payload}`).toMatch(/^[\w.-]+\/[\w.-]+ \S/);
    }
  });

  for (const f of recall) {
    it(`${f.cls} in ${f.location}: recall >= 95%`, () => {
      expect(f.detected / f.attacks, `missed: ${JSON.stringify(f.missed.map((m) => m.payload))}`).toBeGreaterThanOrEqual(MIN_RECALL);
    });
  }

  it('flags at most 0.5% of all benign events, and at most 0.5% of each set and location as any one class', () => {
    const events = falsePositives.reduce((n, f) => n + f.events, 0);
    const flagged = falsePositives.flatMap((f) => f.flagged);
    expect(flagged.length / events, JSON.stringify(flagged)).toBeLessThanOrEqual(MAX_FALSE_POSITIVES);
    for (const f of falsePositives) {
      for (const cls of Object.keys(FUZZ_FILES) as InjectionClass[]) {
        const asClass = f.flagged.filter((x) => x.classes.includes(cls));
        expect(asClass.length / f.events, `${f.set} in ${f.location} as ${cls}: ${JSON.stringify(asClass)}`).toBeLessThanOrEqual(MAX_FALSE_POSITIVES);
      }
    }
  });

  it('real user-written text (reviews, prose in many scripts, names, system logs) and the real access logs are not flagged at all', () => {
    for (const f of falsePositives.filter((x) => x.set.endsWith('(real)') && !x.set.startsWith('Markdown'))) {
      expect(f.flagged, `${f.set} in ${f.location}`).toEqual([]);
    }
  });

  it('leaves out only lines that are no attack on their own: bare words, lone metacharacters, probes', () => {
    const excluded = Object.values(FUZZ_FILES).flatMap((file) => loadAttackFile(file).excluded);
    const flagged = excluded.filter((e) => scanRequest({ metadata: { comment: e.payload } }).length > 0).map((e) => e.payload);
    // A few left-out lines are caught anyway (a lone `'; exec xp_cmdshell` fragment); most are not.
    expect(flagged.length / excluded.length).toBeLessThan(0.25);
  });
});

describe('where the line is drawn: a word alone is no attack, the same word in attack syntax is', () => {
  const classes = (value: string, where: 'query' | 'metadata'): string[] =>
    scanRequest(where === 'query' ? { query: `q=${encodeURIComponent(value)}` } : { metadata: { note: value } }).map((f) => f.class);

  for (const word of ['onscroll', 'uname', 'whoami', 'sleep 5', 'ls -la', 'alert', 'order by date', 'select', 'net view', '..']) {
    it(`"${word}" alone is not flagged in metadata`, () => expect(classes(word, 'metadata')).toEqual([]));
  }
  const attacks: readonly (readonly [string, string])[] = [
    ['<body onscroll=alert(1)>', 'xss'],
    ['; uname -a', 'command_injection'],
    ['| whoami', 'command_injection'],
    ["exec('sleep 5')", 'command_injection'],
    ['ls -l /etc/', 'command_injection'],
    ['(alert)(1)', 'xss'],
    [' ORDER BY 5--', 'sql_injection'],
    ["' UNION ALL SELECT", 'sql_injection'],
    ['; net view', 'command_injection'],
    ['/..%uEFC8..%uEFC8etc/hosts', 'path_traversal'],
  ];
  for (const [value, cls] of attacks) {
    for (const where of ['query', 'metadata'] as const) {
      it(`${JSON.stringify(value)} is ${cls} in ${where}`, () => expect(classes(value, where)).toContain(cls));
    }
  }
  it('Markdown code spans are text: a quoted slash, a backticked word, a list in braces', () => {
    for (const text of [
      "Default: `'/'`",
      'If `false`, the prefix gets a trailing "/".',
      'otherwise `true`/`false` to indicate it',
      'option to\n`true`.',
      'a windows terminal (`cmd.exe` or powershell)',
      'a `{start,\nend, type, value}` object',
      'when to use `EVAL` and when to use `EVALSHA`',
      'in a `setInterval` callback',
      'safari: \'>=9\', firefox: ">31"',
      'The application has not emitted the `start` event yet.',
    ]) {
      for (const where of ['query', 'metadata'] as const) expect(classes(text, where), `${text} in ${where}`).toEqual([]);
    }
  });
  const codeSpanAttacks: readonly (readonly [string, string])[] = [
    ["'-'", 'sql_injection'],
    ['"hi"") or (""a""=""a"', 'sql_injection'],
    ['$(`ls`)', 'command_injection'],
    ['a`id`', 'command_injection'],
    ['{cat,/etc/passwd}', 'command_injection'],
    ['; chmod +x /tmp/x; /tmp/x', 'command_injection'],
    ['alert`1`', 'xss'],
  ];
  for (const [value, cls] of codeSpanAttacks) {
    for (const where of ['query', 'metadata'] as const) {
      it(`${JSON.stringify(value)} is still ${cls} in ${where}`, () => expect(classes(value, where)).toContain(cls));
    }
  }
  it('a backtick after a slash substitutes in a request path', () => {
    expect(scanRequest({ path: '/api/exec/%60id%60' }).map((f) => f.class)).toContain('command_injection');
  });

  it('prose that opens with a command word is not a command line', () => {
    for (const text of [
      'Echo chamber effects are real.',
      'wget the file from https://example.com/a.tar.gz then untar it.',
      'Host agent reports: /etc/passwd modified',
    ]) {
      expect(classes(text, 'metadata')).toEqual([]);
    }
  });
});
