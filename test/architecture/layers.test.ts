import { expect, it } from 'vitest';
import { FLOORS, upwardImports } from './layers.js';

it('no module of src/ imports from a higher floor (the picture in docs/internals/architecture.md)', () => {
  expect(upwardImports()).toEqual([]);
});

it('every folder of src/ has a floor', async () => {
  const { readdirSync } = await import('node:fs');
  const named = new Set(FLOORS.flat());
  const unplaced = readdirSync(new URL('../../src/', import.meta.url)).filter((name) => !named.has(name));
  expect(unplaced).toEqual([]);
});
