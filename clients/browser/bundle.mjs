// Builds dist/vigil.min.js, the browser client and its core in one minified ES module (for a
// <script type="module"> or a CDN), and dist/vigil.iife.min.js, the same for a plain <script>
// tag, which defines the global `Vigil`. The tests build the same bundles from these options.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** esbuild options of the shipped bundle; `write: false` returns it in memory. */
export function bundleOptions(overrides = {}) {
  return {
    entryPoints: [here('./src/index.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2020',
    platform: 'browser',
    // The core is bundled from its sources, so the bundle never depends on a build order.
    alias: { '@vigil/client-core': here('../core/src/index.ts') },
    legalComments: 'none',
    ...overrides,
  };
}

/** esbuild options of the script-tag build. */
export function scriptTagOptions(overrides = {}) {
  return bundleOptions({ entryPoints: [here('./src/script-tag.ts')], format: 'iife', ...overrides });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build(bundleOptions({ outfile: here('./dist/vigil.min.js') }));
  await build(scriptTagOptions({ outfile: here('./dist/vigil.iife.min.js') }));
}
