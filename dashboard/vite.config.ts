import { defineConfig } from 'vite';

/** The dashboard bundle: served by the service at /dashboard from dashboard/dist. */
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  publicDir: 'public',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or modulepreload polyfill: the Content-Security-Policy allows scripts from files only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
