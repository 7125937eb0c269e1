import { describe, expect, it } from 'vitest';
import { measure, table } from './corpus.js';

const MIN_DETECTION = 0.95;
const MAX_FALSE_POSITIVES = 0.005;
const MIN_ATTACKS_PER_CLASS = 300;
const MIN_BENIGN = 3000;

describe('request scanner on the labelled corpora', () => {
  const figures = measure();
  console.log(`\n${table(figures)}\n`);

  it('has corpora of the required size', () => {
    for (const f of figures) {
      expect(f.attacks, f.cls).toBeGreaterThanOrEqual(MIN_ATTACKS_PER_CLASS);
      expect(f.benign, f.cls).toBeGreaterThanOrEqual(MIN_BENIGN);
    }
  });

  for (const f of figures) {
    it(`${f.cls}: detection >= 95%`, () => {
      expect(f.detected / f.attacks, `missed: ${JSON.stringify(f.missed.slice(0, 10))}`).toBeGreaterThanOrEqual(MIN_DETECTION);
    });
    it(`${f.cls}: false positives <= 0.5%`, () => {
      expect(f.falsePositives.length / f.benign, `flagged: ${JSON.stringify(f.falsePositives.slice(0, 10))}`).toBeLessThanOrEqual(MAX_FALSE_POSITIVES);
    });
  }
});
