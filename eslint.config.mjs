import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Regular expressions meet untrusted input (headers, bodies, settings): none may backtrack
    // super-linearly, in a match or in the moves of a global or sticky search.
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  {
    // Delivery adapters reach tenants' targets only through the egress guard (docs/egress.md): no
    // client of their own that would resolve and connect without it.
    files: ['libs/destinations/src/delivery/adapters/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'Use node:http(s) with the egress guard (docs/egress.md).' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...['net', 'node:net', 'tls', 'node:tls'].map((name) => ({
              name,
              importNames: ['connect', 'createConnection', 'Socket', 'TLSSocket'],
              message: 'Connect through the egress guard (docs/egress.md).',
            })),
            ...['dns', 'node:dns', 'dns/promises', 'node:dns/promises', 'undici', 'axios', 'got'].map(
              (name) => ({
                name,
                message: 'Resolve and connect through the egress guard (docs/egress.md).',
              }),
            ),
          ],
        },
      ],
    },
  },
);
