// Lets plain `node` run the TypeScript sources of the repository without a build step:
//   node --require ./bench/register.js bench/ingest.bench.ts
// - `.ts` files are compiled on load with @swc/core (already a dev dependency, through @swc/jest),
//   with the same options jest.config.js gives @swc/jest (decorator metadata matters to Nest DI);
// - `@tributary/<lib>` imports resolve through tsconfig.json "paths", as in jest.config.js.
// Chosen over `nest build`/tsc because tsc leaves the path aliases in its output (they would need
// rewriting too) and over ts-node/@swc-node because neither is installed.
'use strict';
const Module = require('node:module');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');
const tsconfig = require('../tsconfig.json');

const repositoryRoot = path.resolve(__dirname, '..');
const aliases = Object.entries(tsconfig.compilerOptions.paths).map(([alias, [target]]) => [
  alias,
  path.join(repositoryRoot, target),
]);

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveWithAliases(request, ...rest) {
  for (const [alias, target] of aliases) {
    if (request === alias) return resolveFilename.call(this, target, ...rest);
    if (request.startsWith(`${alias}/`)) {
      return resolveFilename.call(this, target + request.slice(alias.length), ...rest);
    }
  }
  return resolveFilename.call(this, request, ...rest);
};

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    // Inline maps cost nothing at run time and let CPU profiles point at the TypeScript lines.
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
