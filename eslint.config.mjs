import { readFileSync } from 'node:fs';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

// The dependency rules of docs/architecture.md, on import specifiers (relative, or from the
// repository root through `baseUrl`): a lib imports only the libs `libs/boundaries.json` lets it
// (the map the architecture doc's table shows; test/architecture/boundaries.spec.ts holds the two
// together) and never an app; an app's code (`apps/*/src`) never imports another app, except that
// the all-in-one composes the other three through their root modules (`<app>/src/<app>.module`);
// pure libs import no Nest. A lib's tests and kits may import any lib, to build what they test
// against. (Test kits under `apps/*/test` serve cross-app suites and may be shared.) Its own rule
// name, so that it adds to the `no-restricted-imports` of a directory (the egress guard's below)
// instead of replacing it.
const LIBS = JSON.parse(readFileSync(new URL('./libs/boundaries.json', import.meta.url), 'utf8')).libs;
const TEST_FILES = [
  '**/*.spec.ts',
  '**/*-spec.ts',
  '**/*.contract.ts',
  '**/*.fixture.ts',
  '**/*.kit.ts',
  '**/testing/**',
  '**/test/**',
];
const APPS = ['config-api', 'tracking-api', 'router', 'tributary', 'cli'];
const appImport = (apps) => `^(?:\\.\\./)*(?:apps/)?(?:${apps.join('|')})/`;
const importBoundaries = (patterns) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
});
const noAppFromLib = {
  regex: '^(?:\\.\\./)*apps/',
  message: 'A lib never imports an app (docs/architecture.md): move what both need into a lib.',
};
const noNest = { regex: '^@nestjs/', message: 'A pure lib imports no Nest (docs/architecture.md).' };
/** Another lib than `lib` and those it may import, by alias or by a relative path into its `src`. */
const otherLibs = (lib, allowed) => {
  const permitted = [lib, ...allowed].join('|');
  const message = `libs/${lib} may import ${allowed.length ? allowed.join(', ') : 'no other lib'} (libs/boundaries.json, docs/architecture.md).`;
  return [
    { regex: `^@tributary/(?!(?:${permitted})(?:/|$))`, message },
    { regex: `^(?:\\.\\./)+(?:libs/)?(?!(?:${permitted})/)[a-z-]+/src(?:/|$)`, message },
  ];
};
const boundaries = [
  ...Object.entries(LIBS).flatMap(([lib, { pure, mayImport }]) => [
    {
      files: [`libs/${lib}/**/*.ts`],
      ignores: TEST_FILES,
      rules: importBoundaries([noAppFromLib, ...otherLibs(lib, mayImport), ...(pure ? [noNest] : [])]),
    },
    {
      files: TEST_FILES.map((glob) => `libs/${lib}/${glob}`),
      rules: importBoundaries([noAppFromLib, ...(pure ? [noNest] : [])]),
    },
  ]),
  ...APPS.filter((app) => app !== 'tributary').map((app) => ({
    files: [`apps/${app}/src/**/*.ts`],
    rules: importBoundaries([
      {
        regex: appImport(APPS.filter((other) => other !== app)),
        message: 'An app never imports another app (docs/architecture.md): move what both need into a lib.',
      },
    ]),
  })),
  {
    // The bench (test/bench) measures the product from outside, as its users reach it: through the
    // libs' public entry points (`@tributary/<lib>` and `@tributary/<lib>/testing`) and the test kits of
    // test/support, never a lib's own files nor an app's, so that moving code inside a lib or an app
    // cannot break it, and what it measures is what the product offers.
    files: ['test/bench/**/*.ts'],
    rules: importBoundaries([
      {
        // A relative path, or one from the repository root through `baseUrl`.
        regex: '^(?:\\.\\./)*(?:libs|apps)/',
        message:
          'The bench imports a lib through `@tributary/<lib>` or `@tributary/<lib>/testing` only, and no app: it runs the server as a process (docs/architecture.md).',
      },
      {
        regex: '^@tributary/[a-z-]+/(?!testing$)',
        message:
          'The bench imports a lib through `@tributary/<lib>` or `@tributary/<lib>/testing` only (docs/architecture.md).',
      },
    ]),
  },
  {
    files: ['apps/tributary/src/**/*.ts'],
    rules: importBoundaries([
      {
        // Another app's root module, `<app>/src/<app>.module`, and nothing deeper.
        regex: '^(?:\\.\\./)*(?:apps/)?(config-api|tracking-api|router|cli)/(?!src/\\1\\.module$)',
        message:
          'The all-in-one composes the other apps through their root modules (`<app>/src/<app>.module`) only (docs/architecture.md).',
      },
    ]),
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  ...boundaries,
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
    // client of their own that would resolve and connect without it. Every destination folder is
    // covered, a new one included; the guard itself (delivery/egress/) is what connects.
    files: ['libs/destinations/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.contract-spec.ts', 'libs/destinations/src/delivery/egress/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'Use the guarded dispatcher or agents of the egress guard (docs/egress.md).' },
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
