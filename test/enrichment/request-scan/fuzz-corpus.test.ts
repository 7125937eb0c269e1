/**
 * Recall on payloads sampled from public fuzz lists and built the way attack tools build them, in a
 * query string and in metadata, and false positives on real traffic and form text; each on the
 * tuning part and on the held-out part of every corpus (split.ts). The held-out recall is the
 * figure that counts: nobody tuned the scanner on those lines. The tables are printed by
 * bench/scan-quality.ts.
 */
import { describe, expect, it } from 'vitest';
import { scanRequest } from '../../../src/enrichment/request-scan/index.js';
import type { InjectionClass } from '../../../src/event/enrichment.js';
import { CLASS_FILES, loadAttackFile, loadClass, measureFalsePositives, measureRecall, type AttackLocation } from './fuzz-corpus.js';
import type { Part } from './split.js';

/**
 * Recall floors per class, location and part: the measured figure rounded down to a whole percent
 * (docs/internals/detection.md). A change that loses payloads fails here.
 */
const MIN_RECALL: Readonly<Record<Part, Readonly<Record<InjectionClass, Readonly<Record<AttackLocation, number>>>>>> = {
  'held-out': {
    sql_injection: { query: 0.99, metadata: 0.99 },
    xss: { query: 0.98, metadata: 0.98 },
    path_traversal: { query: 1, metadata: 0.98 },
    command_injection: { query: 1, metadata: 0.97 },
  },
  tuning: {
    sql_injection: { query: 0.98, metadata: 0.98 },
    xss: { query: 0.99, metadata: 0.99 },
    path_traversal: { query: 1, metadata: 0.99 },
    command_injection: { query: 0.99, metadata: 0.99 },
  },
};
const MAX_FALSE_POSITIVES = 0.005;
/** Each class's held-out sample is large enough that one payload is under 1% of it. */
const MIN_PAYLOADS_PER_CLASS = { tuning: 300, 'held-out': 150 } as const;

describe('request scanner on public fuzz lists and real traffic', () => {
  const recall = measureRecall();
  const falsePositives = measureFalsePositives();

  it('has a sample of every class in both parts, each line attributed to a public list or tool', () => {
    for (const cls of Object.keys(CLASS_FILES) as InjectionClass[]) {
      const { attacks } = loadClass(cls);
      for (const part of ['tuning', 'held-out'] as const) {
        expect(attacks.filter((a) => a.part === part).length, `${cls} ${part}`).toBeGreaterThanOrEqual(MIN_PAYLOADS_PER_CLASS[part]);
      }
      for (const file of CLASS_FILES[cls]) {
        const { attacks: lines, excluded } = loadAttackFile(file);
        for (const p of [...lines, ...excluded]) expect(p.source, `${file}: ${p.payload}`).toMatch(/^[\w.-]+\/[\w.-]+ \S/);
      }
    }
  });

  for (const f of recall) {
    const floor = MIN_RECALL[f.part][f.cls][f.location];
    it(`${f.cls} in ${f.location}, ${f.part} part: recall >= ${Math.round(floor * 100)}%`, () => {
      expect(f.detected / f.attacks, `missed: ${JSON.stringify(f.missed.map((m) => m.payload))}`).toBeGreaterThanOrEqual(floor);
    });
  }

  it('flags at most 0.5% of all benign events, and at most 0.5% of each set, location and part as any one class', () => {
    const events = falsePositives.reduce((n, f) => n + f.events, 0);
    const flagged = falsePositives.flatMap((f) => f.flagged);
    expect(flagged.length / events, JSON.stringify(flagged)).toBeLessThanOrEqual(MAX_FALSE_POSITIVES);
    for (const f of falsePositives) {
      for (const cls of Object.keys(CLASS_FILES) as InjectionClass[]) {
        const asClass = f.flagged.filter((x) => x.classes.includes(cls));
        expect(asClass.length / f.events, `${f.set} in ${f.location} (${f.part}) as ${cls}: ${JSON.stringify(asClass)}`).toBeLessThanOrEqual(
          MAX_FALSE_POSITIVES,
        );
      }
    }
  });

  it('real user-written text (reviews, prose in many scripts, names, system logs) and the real access logs are not flagged at all', () => {
    for (const f of falsePositives.filter((x) => x.set.endsWith('(real)') && !x.set.startsWith('Markdown'))) {
      expect(f.flagged, `${f.set} in ${f.location} (${f.part})`).toEqual([]);
    }
  });

  it('leaves out only lines that are no attack on their own: bare words, lone metacharacters, probes', () => {
    const excluded = (Object.keys(CLASS_FILES) as InjectionClass[]).flatMap((cls) => loadClass(cls).excluded);
    const flagged = excluded.filter((e) => scanRequest({ metadata: { comment: e.payload } }).length > 0).map((e) => e.payload);
    // A few left-out lines are caught anyway (a lone `'; exec xp_cmdshell` fragment); most are not.
    expect(flagged.length / excluded.length).toBeLessThan(0.25);
  });
});

describe('where the line is drawn: a word alone is no attack, the same word in attack syntax is', () => {
  const classes = (value: string, where: 'query' | 'metadata'): string[] =>
    scanRequest(where === 'query' ? { query: `q=${encodeURIComponent(value)}` } : { metadata: { note: value } }).map((f) => f.class);

  for (const word of [
    'onscroll',
    'uname',
    'whoami',
    'sleep 5',
    'ls -la',
    'alert',
    'order by date',
    'select',
    'net view',
    '..',
    '1+1=2 and 2+2=4',
    'page (see 2=2)',
  ]) {
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
    [' AND 1=0-- ', 'sql_injection'],
    [' MAKE_SET(2931=2931,6949)', 'sql_injection'],
    ['1 WHERE 9440=9440 ,IIF(9440=9440,1,1/0)-- krPv', 'sql_injection'],
    ['\\x27\\x4F\\x52 1=1--', 'sql_injection'],
    ['|||sleep 5', 'command_injection'],
    ['x;else sleep 5;fi', 'command_injection'],
    ['x $(echo tag) y', 'command_injection'],
    ['&&for /f "tokens=*" %i in (\'cmd /c "set /a 1+1"\') do @set /p =t%it<nul', 'command_injection'],
    ['%%32%%65%%32%%65/etc/passwd', 'path_traversal'],
    ['..%c1%pc..%c1%pcwindows%c1%pcwin.ini', 'path_traversal'],
    ['.?/.?/.?/etc/issue', 'path_traversal'],
    ['..;/..;/opt/app/config', 'path_traversal'],
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
      'For example, see https://example.com/docs for the options.',
      'LiveJournal.com (webmaster@livejournal.com; for http://www.livejournal.com/users/x/; 8 readers)',
      'Echo chamber effects are real.',
      'wget the file from https://example.com/a.tar.gz then untar it.',
      'Host agent reports: /etc/passwd modified',
    ]) {
      expect(classes(text, 'metadata')).toEqual([]);
    }
  });
});
