import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { DETECTOR_MODULES } from '../../src/detection/detectors/index.js';
import { detectorReference, REFERENCE_PATH } from './reference.js';

it('docs/reference/detectors.md is what the detector modules generate (npm run docs:detectors writes it)', async () => {
  const generated = await detectorReference();
  for (const d of DETECTOR_MODULES) {
    expect(generated, d.name).toContain(`## \`${d.name}\``);
    for (const name of Object.keys(d.thresholds ?? {})) expect(generated, `${d.name}.${name}`).toContain(`| \`${name}\``);
  }
  expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(generated);
});
