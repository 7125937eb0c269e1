/** Loads the labelled corpora of test/fixtures/scan-corpus and measures the scanner on them. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanRequest, type ScanInput } from '../../../src/enrichment/request-scan/index.js';
import type { InjectionClass } from '../../../src/event/enrichment.js';
import { partOf, type Part } from './split.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/scan-corpus');

export interface Sample {
  readonly location: string;
  readonly value: string;
  readonly part: Part;
}

export function loadCorpus(file: string): Sample[] {
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const tab = line.indexOf('\t');
      return { location: line.slice(0, tab), value: line.slice(tab + 1), part: partOf(line) };
    });
}

export function toInput(s: Sample): ScanInput {
  switch (s.location) {
    case 'path':
      return { path: s.value };
    case 'query':
      return { query: s.value };
    case 'user_agent':
      return { userAgent: s.value };
    case 'metadata':
      return { metadata: { message: s.value } };
    default:
      throw new Error(`unknown location ${s.location}`);
  }
}

export function classesOf(s: Sample): Set<InjectionClass> {
  return new Set(scanRequest(toInput(s)).map((f) => f.class));
}

/** Generated variants (generate.ts) plus hand-written extra payloads per class. */
export const ATTACK_FILES: Readonly<Record<InjectionClass, readonly string[]>> = {
  sql_injection: ['sqli.txt', 'sqli-extra.txt'],
  xss: ['xss.txt', 'xss-extra.txt'],
  path_traversal: ['traversal.txt', 'traversal-extra.txt'],
  command_injection: ['cmdi.txt', 'cmdi-extra.txt'],
};

export const BENIGN_FILES = ['benign-paths.txt', 'benign-queries.txt', 'benign-user-agents.txt', 'benign-metadata.txt', 'benign-hard.txt'];

export interface ClassFigures {
  readonly cls: InjectionClass;
  readonly part: Part;
  readonly attacks: number;
  readonly detected: number;
  readonly missed: Sample[];
  readonly benign: number;
  readonly falsePositives: Sample[];
}

/** Detection and false positives per class on one part (split.ts) of every corpus. */
export function measure(part: Part): ClassFigures[] {
  const benign = BENIGN_FILES.flatMap(loadCorpus).filter((s) => s.part === part);
  const benignClasses = benign.map(classesOf);
  return (Object.keys(ATTACK_FILES) as InjectionClass[]).map((cls) => {
    const attacks = ATTACK_FILES[cls].flatMap(loadCorpus).filter((s) => s.part === part);
    const missed = attacks.filter((s) => !classesOf(s).has(cls));
    const falsePositives = benign.filter((_, i) => benignClasses[i]?.has(cls));
    return { cls, part, attacks: attacks.length, detected: attacks.length - missed.length, missed, benign: benign.length, falsePositives };
  });
}

export function table(figures: readonly ClassFigures[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.cls.padEnd(17)} | ${f.part.padEnd(8)} | ${String(f.attacks).padStart(7)} | ${((100 * f.detected) / f.attacks).toFixed(1).padStart(8)}% | ${String(f.benign).padStart(6)} | ${((100 * f.falsePositives.length) / f.benign).toFixed(2).padStart(6)}% |`,
  );
  return ['| class             | part     | attacks | detection | benign |    FP   |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
