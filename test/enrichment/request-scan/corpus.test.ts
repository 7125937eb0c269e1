import { describe, expect, it } from 'vitest';
import { measure, table } from './corpus.js';
import { PARTS } from './split.js';

const MIN_DETECTION = 0.95;
const MAX_FALSE_POSITIVES = 0.005;
/** Per part: the held-out part is about 30% of a corpus (split.ts). */
const MIN_ATTACKS_PER_CLASS = { tuning: 200, 'held-out': 80 } as const;
const MIN_BENIGN = { tuning: 2000, 'held-out': 900 } as const;

describe('request scanner on the labelled corpora, tuning and held-out parts', () => {
  for (const part of PARTS) {
    const figures = measure(part);
    console.log(`\n${table(figures)}\n`);

    it(`${part}: has corpora of the required size`, () => {
      for (const f of figures) {
        expect(f.attacks, f.cls).toBeGreaterThanOrEqual(MIN_ATTACKS_PER_CLASS[part]);
        expect(f.benign, f.cls).toBeGreaterThanOrEqual(MIN_BENIGN[part]);
      }
    });

    for (const f of figures) {
      it(`${part}: ${f.cls}: detection >= 95%`, () => {
        expect(f.detected / f.attacks, `missed: ${JSON.stringify(f.missed.slice(0, 10))}`).toBeGreaterThanOrEqual(MIN_DETECTION);
      });
      it(`${part}: ${f.cls}: false positives <= 0.5%`, () => {
        expect(f.falsePositives.length / f.benign, `flagged: ${JSON.stringify(f.falsePositives.slice(0, 10))}`).toBeLessThanOrEqual(MAX_FALSE_POSITIVES);
      });
    }
  }
});
