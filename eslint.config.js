// Lint rules that keep habits by tool rather than by memory (issue 18): typed rules from
// typescript-eslint, and import-x's cycle check so dependencies keep pointing one way.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'fixtures/**', 'coverage/**'] },
  js.configs.recommended,
  { files: ['**/*.{js,mjs}'], languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-implied-eval': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      // Dependencies point one way (docs/architecture.md): src wires everything; api sees storage;
      // collector and storage meet only in common/, which imports nothing of ours.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './common',
              from: ['./collector', './storage', './api', './src'],
              message: 'common/ is the neutral model: it imports nothing of ours.',
            },
            {
              target: './collector',
              from: ['./storage', './api', './src'],
              message: 'collector/ meets storage only through common/.',
            },
            {
              target: './storage',
              from: ['./collector', './api', './src'],
              message: 'storage/ meets collector only through common/.',
            },
            { target: './api', from: ['./src', './collector'], message: 'api/ sees storage interfaces; src/ wires it.' },
            {
              target: './web',
              from: ['./src', './api', './storage', './collector', './common'],
              message: 'web/ (the console) talks to the server through the public API only.',
            },
          ],
        },
      ],
      // Input checks match control characters on purpose (NUL, ESC and the rest are refused in names and messages).
      'no-control-regex': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON answers and walk them in assertions: a wrong shape fails the
    // assertion itself, so typing every answer would add nothing. Production code has no `any`.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
