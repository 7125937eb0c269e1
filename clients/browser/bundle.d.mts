import type { BuildOptions } from 'esbuild';

/** esbuild options of the shipped bundle (dist/vigil.min.js); `write: false` returns it in memory. */
export function bundleOptions(overrides?: BuildOptions): BuildOptions;
