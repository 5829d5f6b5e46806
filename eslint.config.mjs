// Lint rules: typescript-eslint's strict type-checked set plus the house rules of docs/style.md.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // The rig's runner and the flood rig's child programs are plain node scripts, like bin/.
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bin/**',
      '*.js',
      '*.cjs',
      '*.mjs',
      'test/reliability/run.mjs',
      'test/helpers/h2-flood-*.mjs',
      'test/helpers/h2-flood-*.cjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-console': 'off',
    },
  },
  {
    // docs/style.md's lengths: small functions and small modules, in the service and the sim.
    files: ['src/**/*.ts', 'control-plane-sim/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'control-plane-sim/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The pages' scripts run in the browser as they are (no build step): plain scripts, linted
    // by the recommended rules without types, with the browser globals they use.
    files: ['web/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'script',
      parserOptions: { projectService: false },
      // `ui` is web/common.js's, loaded before each page's script.
      globals: Object.fromEntries(
        ['document', 'fetch', 'Node', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'ui'].map(
          (name) => [name, 'readonly'],
        ),
      ),
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      strict: ['error', 'global'],
      'no-undef': 'error',
    },
  },
  { files: ['web/common.js'], languageOptions: { globals: { ui: 'off' } } },
);
