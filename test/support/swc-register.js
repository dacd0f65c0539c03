// A require hook that lets Node run the TypeScript sources directly, for tests that start Tributary as
// a child process and for `npm run bench` (`node --require test/support/swc-register.js apps/tributary/src/main.ts`): `.ts`
// files are compiled with @swc/core as jest compiles them (legacy decorators with metadata, CommonJS),
// and the `@tributary/*` aliases resolve through tsconfig.json's `paths`.
'use strict';
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { join } = require('node:path');
const { transformSync } = require('@swc/core');

const root = join(__dirname, '..', '..');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));

/** `@tributary/event-log` → `<root>/libs/event-log/src`; only exact aliases, as tsconfig declares them. */
const aliases = new Map(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [
    alias,
    join(root, compilerOptions.baseUrl ?? '.', target),
  ]),
);

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveWithAliases(request, ...rest) {
  return resolveFilename.call(this, aliases.get(request) ?? request, ...rest);
};

const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

// Registering `.ts` also makes Node try it for extension-less requires and directory `index.ts`.
Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), { ...swcOptions, filename });
  module._compile(code, filename);
};
