#!/usr/bin/env node
// Builds the web console (console/dist) with Vite, installing the console package's dependencies
// first when they are missing. The output is written beside dist/ and moved into place when complete,
// so a running server never serves half a build; while it runs, `console/.building` holds this
// process's id and the server's /console answers a page that reloads itself until the build is there.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const consoleFolder = join(root, 'console');
const marker = join(consoleFolder, '.building');
const next = join(consoleFolder, '.dist-next');
const startedAt = Date.now();

function run(what, command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[build] console: ${what} failed`);
    rmSync(marker, { force: true });
    process.exit(result.status ?? 1);
  }
}

writeFileSync(marker, String(process.pid));
try {
  if (!existsSync(join(consoleFolder, 'node_modules', 'vite'))) {
    run('installing its dependencies', process.execPath, [join(__dirname, 'install-console.js')]);
  }
  rmSync(next, { recursive: true, force: true });
  run('vite build', process.execPath, [
    join(consoleFolder, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    '--config',
    'console/vite.config.mjs',
    '--outDir',
    next,
    '--logLevel',
    'warn',
  ]);
  rmSync(join(consoleFolder, 'dist'), { recursive: true, force: true });
  renameSync(next, join(consoleFolder, 'dist'));
} finally {
  rmSync(marker, { force: true });
}
console.log(`[build] console: built in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
