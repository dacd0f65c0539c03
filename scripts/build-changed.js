#!/usr/bin/env node
// `npm start`'s build step: builds the server (`nest build tributary`) and the web console
// (`vite build`) only when a source is newer than what was built last, so a start with nothing
// changed skips both. `--force` rebuilds both.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const force = process.argv.includes('--force');
/** Tests are not part of either build: editing one needs no rebuild. */
const TEST_FILE = /\.(spec|e2e-spec|contract-spec|compat-spec)\.tsx?$|\.contract\.ts$/;

/** Newest modification time among these files and the files under these folders (0 if none). */
function newestChange(paths) {
  let newest = 0;
  const visit = (path) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return;
    }
    if (stats.isDirectory()) {
      for (const entry of readdirSync(path)) {
        if (entry === 'node_modules' || entry === 'dist' || entry === 'test') continue;
        visit(join(path, entry));
      }
    } else if (!TEST_FILE.test(path)) {
      newest = Math.max(newest, stats.mtimeMs);
    }
  };
  paths.forEach((path) => visit(join(root, path)));
  return newest;
}

function builtAt(file) {
  const path = join(root, file);
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

const targets = [
  {
    name: 'server',
    output: 'dist/apps/tributary/src/main.js',
    sources: ['apps', 'libs', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'],
    command: [join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build', 'tributary'],
  },
  {
    name: 'console',
    output: 'console/dist/index.html',
    sources: ['console', 'libs/contracts/src', 'package-lock.json'],
    command: [
      join(root, 'console', 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      'console/vite.config.mjs',
      '--logLevel',
      'warn',
    ],
    // The console is its own package (console/package.json): install it when it is missing.
    prepare: () =>
      existsSync(join(root, 'console', 'node_modules', 'vite')) ||
      run('console dependencies', [join(root, 'scripts', 'install-console.js')]),
  },
];

for (const target of targets) {
  const built = builtAt(target.output);
  const changed = newestChange(target.sources);
  if (!force && built > 0 && built >= changed) {
    console.log(`[build] ${target.name}: up to date (${relative(root, join(root, target.output))})`);
    continue;
  }
  console.log(`[build] ${target.name}: ${built === 0 ? 'not built yet' : 'sources changed'}, building`);
  const startedAt = Date.now();
  target.prepare?.();
  run(target.name, target.command);
  console.log(`[build] ${target.name}: built in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
}

function run(what, command) {
  const result = spawnSync(process.execPath, command, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[build] ${what}: failed`);
    process.exit(result.status ?? 1);
  }
  return true;
}
