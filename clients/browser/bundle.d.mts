import type { BuildOptions } from 'esbuild';

/** esbuild options of the shipped bundle (dist/vigil.min.js); `write: false` returns it in memory. */
export function bundleOptions(overrides?: BuildOptions): BuildOptions;

/** esbuild options of the script-tag build (dist/vigil.iife.min.js, global `Vigil`). */
export function scriptTagOptions(overrides?: BuildOptions): BuildOptions;
