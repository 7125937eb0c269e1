/**
 * Loads the corpora of test/fixtures/fuzz-corpus (payloads sampled from public fuzz lists; real
 * access logs, system log text, names, reviews, prose in many scripts and README Markdown) and
 * measures the request scanner on them: recall per class and location, false positives per benign
 * set, location and class, each on the tuning part and the held-out part of every corpus (split.ts).
 * Used by fuzz-corpus.test.ts, calibration.test.ts and bench/scan-quality.ts.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanRequest, type ScanInput } from '../../../src/enrichment/request-scan/index.js';
import type { InjectionClass } from '../../../src/event/enrichment.js';
import { BENIGN_FILES, loadCorpus, toInput } from './corpus.js';
import { partOf, PARTS, type Part } from './split.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/fuzz-corpus');

export interface Payload {
  readonly payload: string;
  /** `owner/repo path` of the public list the line was copied from. */
  readonly source: string;
  /** The corpus file of the line. */
  readonly file: string;
  readonly part: Part;
}

export interface ExcludedPayload extends Payload {
  readonly reason: string;
}

export interface AttackFile {
  readonly attacks: Payload[];
  readonly excluded: ExcludedPayload[];
}

/**
 * One payload per line. `#! source: <repo> <path> @<commit>` names the list of the lines below it,
 * `#! not-an-attack: <reason>` moves the lines below it (up to the next source) out of recall,
 * `#! file-targets: a b c` fills the lists' `{FILE}` placeholder with these targets in turn.
 */
export function loadAttackFile(file: string): AttackFile {
  const attacks: Payload[] = [];
  const excluded: ExcludedPayload[] = [];
  let source = '';
  let reason: string | undefined;
  let targets: string[] = [];
  let filled = 0;
  for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
    if (line.startsWith('#! source: ')) {
      source = line.slice('#! source: '.length).replace(/ @[0-9a-f]+$/, '');
      reason = undefined;
      continue;
    }
    if (line.startsWith('#! not-an-attack: ')) {
      reason = line.slice('#! not-an-attack: '.length);
      continue;
    }
    if (line.startsWith('#! file-targets: ')) {
      targets = line.slice('#! file-targets: '.length).split(' ');
      continue;
    }
    if (line.startsWith('#!') || line.length === 0) continue;
    let payload = line;
    if (payload.includes('{FILE}') && targets.length > 0) payload = payload.replaceAll('{FILE}', targets[filled++ % targets.length] ?? '');
    const part = partOf(line);
    if (reason === undefined) attacks.push({ payload, source, file, part });
    else excluded.push({ payload, source, file, part, reason });
  }
  return { attacks, excluded };
}

export const FUZZ_FILES: Readonly<Record<InjectionClass, string>> = {
  sql_injection: 'sqli.txt',
  xss: 'xss.txt',
  path_traversal: 'traversal.txt',
  command_injection: 'cmdi.txt',
};

/**
 * Every attack corpus of a class: the public lists sampled first (FUZZ_FILES), then the wfuzz
 * wordlists and the tool generators of generate.ts (sqlmap, dotdotpwn, commix, XSStrike).
 */
export const CLASS_FILES: Readonly<Record<InjectionClass, readonly string[]>> = {
  sql_injection: ['sqli.txt', 'wfuzz-sqli.txt', 'sqlmap-sqli.txt'],
  xss: ['xss.txt', 'wfuzz-xss.txt', 'xsstrike-xss.txt'],
  path_traversal: ['traversal.txt', 'wfuzz-traversal.txt', 'dotdotpwn-traversal.txt'],
  command_injection: ['cmdi.txt', 'commix-cmdi.txt'],
};

export function loadClass(cls: InjectionClass): AttackFile {
  const files = CLASS_FILES[cls].map(loadAttackFile);
  return { attacks: files.flatMap((f) => f.attacks), excluded: files.flatMap((f) => f.excluded) };
}

export const ATTACK_LOCATIONS = ['query', 'metadata'] as const;
export type AttackLocation = (typeof ATTACK_LOCATIONS)[number];

/** The payload as a client sends it: URL-encoded as a query parameter value, or as a metadata string. */
export function placePayload(payload: string, location: AttackLocation): ScanInput {
  return location === 'query' ? { path: '/search', query: `q=${encodeURIComponent(payload)}&page=1` } : { metadata: { comment: payload } };
}

function classesOf(input: ScanInput): Set<InjectionClass> {
  return new Set(scanRequest(input).map((f) => f.class));
}

export interface RecallFigures {
  readonly cls: InjectionClass;
  readonly location: AttackLocation;
  readonly part: Part;
  readonly attacks: number;
  readonly detected: number;
  readonly missed: Payload[];
  readonly excluded: number;
}

/** Recall per class, location and part; `files` narrows each class to some of its corpora. */
export function measureRecall(files?: (file: string) => boolean): RecallFigures[] {
  const out: RecallFigures[] = [];
  for (const cls of Object.keys(CLASS_FILES) as InjectionClass[]) {
    const all = loadClass(cls);
    for (const part of PARTS) {
      const attacks = all.attacks.filter((a) => a.part === part && (files?.(a.file) ?? true));
      const excluded = all.excluded.filter((a) => a.part === part && (files?.(a.file) ?? true));
      if (attacks.length === 0) continue;
      for (const location of ATTACK_LOCATIONS) {
        const missed = attacks.filter((a) => !classesOf(placePayload(a.payload, location)).has(cls));
        out.push({ cls, location, part, attacks: attacks.length, detected: attacks.length - missed.length, missed, excluded: excluded.length });
      }
    }
  }
  return out;
}

/** A benign event and where its text came from. */
export interface BenignEvent {
  readonly input: ScanInput;
  readonly text: string;
  readonly part: Part;
}

/** Access-log lines as events: path and query from the request target, the user agent, the referrer in metadata. */
export function loadAccessLog(): BenignEvent[] {
  return dataLines('benign-access-log.txt').map((line) => {
    const [target = '/', referrer = '-', userAgent = '-'] = line.split('\t');
    const q = target.indexOf('?');
    const input: ScanInput = {
      path: q === -1 ? target : target.slice(0, q),
      ...(q === -1 ? {} : { query: target.slice(q + 1) }),
      ...(userAgent === '-' ? {} : { userAgent }),
      ...(referrer === '-' ? {} : { metadata: { referrer } }),
    };
    return { input, text: line, part: partOf(line) };
  });
}

/** Real text sets: one text per line, or (`json`) one JSON string per line for texts that keep their line breaks. */
function loadTexts(file: string, format: 'line' | 'json' = 'line'): { text: string; part: Part }[] {
  return dataLines(file).map((line) => ({ text: format === 'json' ? jsonString(line) : line, part: partOf(line) }));
}

function jsonString(line: string): string {
  const value: unknown = JSON.parse(line);
  if (typeof value !== 'string') throw new Error(`not a JSON string: ${line}`);
  return value;
}

/** The labelled benign corpora of test/fixtures/scan-corpus (paths, queries, agents, form and ticket text). */
export function loadFormCorpus(): BenignEvent[] {
  return BENIGN_FILES.flatMap(loadCorpus).map((s) => ({ input: toInput(s), text: `${s.location}\t${s.value}`, part: s.part }));
}

function dataLines(file: string): string[] {
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#!'));
}

/** Where a benign set's events carry their text: a whole request, one of the attack locations, or as labelled. */
export type BenignLocation = 'request' | AttackLocation | 'as labelled';

export interface BenignSet {
  readonly set: string;
  readonly location: BenignLocation;
  readonly load: () => BenignEvent[];
}

/** Text a user writes is sent the way a payload is: as a query value and as a metadata string. */
function textSets(set: string, load: () => { text: string; part: Part }[]): BenignSet[] {
  return ATTACK_LOCATIONS.map((location) => ({
    set,
    location,
    load: () => load().map(({ text, part }) => ({ input: placePayload(text, location), text, part })),
  }));
}

export const BENIGN_SETS: readonly BenignSet[] = [
  { set: 'access log (real)', location: 'request', load: loadAccessLog },
  ...textSets('system log (real)', () => loadTexts('benign-app-log.txt')),
  ...textSets('names in many scripts (real)', () => loadTexts('benign-names.txt')),
  ...textSets('product, film and restaurant reviews (real)', () => loadTexts('benign-reviews.txt')),
  ...textSets('prose in many scripts (real)', () => loadTexts('benign-udhr.txt')),
  ...textSets('Markdown and code blocks of READMEs (real)', () => loadTexts('benign-markdown.txt', 'json')),
  { set: 'form, ticket and request text (generated)', location: 'as labelled', load: loadFormCorpus },
];

export interface FalsePositiveFigures {
  readonly set: string;
  readonly location: BenignLocation;
  readonly part: Part;
  readonly events: number;
  readonly flagged: { text: string; classes: InjectionClass[] }[];
}

export function measureFalsePositives(): FalsePositiveFigures[] {
  return BENIGN_SETS.flatMap(({ set, location, load }) => {
    const all = load();
    return PARTS.map((part) => {
      const events = all.filter((e) => e.part === part);
      const flagged = events.flatMap((e) => {
        const classes = [...classesOf(e.input)];
        return classes.length > 0 ? [{ text: e.text, classes }] : [];
      });
      return { set, location, part, events: events.length, flagged };
    });
  });
}

const pct = (n: number, d: number): string => `${((100 * n) / d).toFixed(1)}%`;

export function recallTable(figures: readonly RecallFigures[]): string {
  const rows = figures.map((f) => `| ${f.cls} | ${f.location} | ${f.part} | ${f.attacks} | ${f.detected} | ${pct(f.detected, f.attacks)} | ${f.excluded} |`);
  return ['| class | location | part | payloads | detected | recall | left out (not an attack alone) |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

export function falsePositiveTable(figures: readonly FalsePositiveFigures[]): string {
  const classes = Object.keys(FUZZ_FILES) as InjectionClass[];
  const rows = figures.map((f) => {
    const perClass = classes.map((cls) => f.flagged.filter((x) => x.classes.includes(cls)).length);
    return `| ${f.set} | ${f.location} | ${f.part} | ${f.events} | ${f.flagged.length} (${pct2(f.flagged.length, f.events)}) | ${perClass.join(' | ')} |`;
  });
  return [
    `| benign set | location | part | events | flagged | ${classes.join(' | ')} |`,
    `|---|---|---|---|---|${classes.map(() => '---|').join('')}`,
    ...rows,
  ].join('\n');
}

const pct2 = (n: number, d: number): string => `${((100 * n) / d).toFixed(2)}%`;
