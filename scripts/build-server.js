#!/usr/bin/env node
// `npm start`'s server build: compiles apps/ and libs/ (what tsconfig.build.json compiles) to dist/ with
// @swc/core, file by file, the way the tests and the bench run the sources (swc-register.js): a few
// seconds where `nest build` (tsc) takes most of a minute. It does not type-check: `npm run typecheck`,
// the image's `nest build` and the test suite do. The `@tributary/*` aliases become relative requires.
'use strict';
const { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');
const { transformFileSync } = require('@swc/core');

const root = join(__dirname, '..');
/** `TRIBUTARY_BUILD_OUT_DIR`: another output folder (the build's own test writes to a temporary one). */
const outDir = process.env.TRIBUTARY_BUILD_OUT_DIR || join(root, 'dist');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));

/** Test files never enter the build; test kits the sources import (`testing/`) do, as with tsc. */
const EXCLUDED_FILE = /\.(spec|e2e-spec|contract-spec|compat-spec)\.ts$|-spec\.ts$|\.contract\.ts$|\.d\.ts$/;
const EXCLUDED_FOLDER = new Set(['node_modules', 'dist', 'test']);

function sources(folder) {
  const found = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!EXCLUDED_FOLDER.has(entry.name)) found.push(...sources(path));
    } else if (entry.name.endsWith('.ts') && !EXCLUDED_FILE.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

const swcOptions = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    baseUrl: root,
    paths: compilerOptions.paths,
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: true,
  swcrc: false,
};

const startedAt = Date.now();
rmSync(outDir, { recursive: true, force: true });
const files = [...sources(join(root, 'apps')), ...sources(join(root, 'libs'))];
for (const file of files) {
  const target = join(outDir, relative(root, file)).replace(/\.ts$/, '.js');
  const { code, map } = transformFileSync(file, {
    ...swcOptions,
    filename: file,
    sourceFileName: relative(dirname(target), file),
  });
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${code}\n//# sourceMappingURL=${target.slice(dirname(target).length + 1)}.map\n`);
  if (map) writeFileSync(`${target}.map`, map);
}
console.log(`[build] server: ${files.length} files compiled with swc in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
