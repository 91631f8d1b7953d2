// ESLint flat config: typescript-eslint (type-aware) for the frontend sources, plain
// recommended rules for the node scripts; formatting is left to prettier. Module and
// function length limits come from frontend/size-limits.mjs, with the files of
// frontend/size-baseline.json exempt from the rules listed there; import cycles and the
// baseline's staleness are checked by frontend/check-structure.mjs (also `npm run lint`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

import { SIZE_RULES, sizeBaseline } from './frontend/size-limits.mjs';

const baselineExemptions = Object.entries(sizeBaseline()).map(([file, entry]) => ({
  files: [file],
  rules: Object.fromEntries(entry.rules.map((rule) => [rule, 'off'])),
}));

/** What one layer of frontend/src may not import (the node check also catches type imports). */
function layerRule(banned) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: banned.map((folder) => ({
          group: [`**/${folder}/*`],
          message: `not ${folder}/`,
        })),
      },
    ],
  };
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'tb_plugin/static/dist/**',
      'test-output/**',
      '.venv/**',
      'bench/**',
      'build/**',
      '**/*.egg-info/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['frontend/src/**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked, ...tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.browser },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: ['frontend/src/**/*.ts', 'frontend/*.mjs'],
    ignores: ['frontend/src/api/generated.ts'],
    rules: SIZE_RULES,
  },
  ...baselineExemptions,
  { files: ['frontend/src/components/**/*.ts'], rules: layerRule(['shell', 'views']) },
  { files: ['frontend/src/api/**/*.ts'], rules: layerRule(['components', 'shell', 'views']) },
  {
    // node:test's describe()/it() return promises the runner awaits itself; a describe()
    // block is as long as its cases.
    files: ['frontend/src/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      'max-lines-per-function': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // page.evaluate() callbacks run in the browser.
    files: ['tests/e2e/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  prettier,
);
