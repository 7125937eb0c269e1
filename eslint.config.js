import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'clients/*/dist/**', 'agent/dist/**', 'dashboard/dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules: a promise nobody awaits, or one handed where a void callback is expected,
    // loses its rejection silently.
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Node 20's V8 takes a slow path when an object made by a leading spread then gains a member
    // (docs/internals/performance.md, "Node 20's slow paths"): on the path every event takes, members are
    // listed, put before the spread, or added with Object.assign.
    files: [
      'src/pipeline/**/*.ts',
      'src/catalog/catalog.ts',
      'src/enrichment/*.ts',
      'src/detection/**/*.ts',
      'src/scoring/**/*.ts',
      'src/limits/**/*.ts',
      'src/event/**/*.ts',
      'src/threat-models/**/*.ts',
      'src/storage/commit-plan.ts',
      'src/storage/sqlite-writes.ts',
      'src/storage/sqlite-writer-thread.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child ~ *',
          message:
            'On Node 20 an object that starts with a spread and then gains members takes a slow path (docs/internals/performance.md, "Node 20\'s slow paths"): list the members, put them before the spread, or use Object.assign({}, ...).',
        },
      ],
    },
  },
  {
    // Tests read untyped JSON bodies; `any` there is the honest type.
    files: ['test/**/*.ts', 'agent/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly' } },
  },
);
