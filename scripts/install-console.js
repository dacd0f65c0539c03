#!/usr/bin/env node
// The root package's postinstall: installs the web console's own dependencies (console/package.json).
// The console is a separate package because it needs React 19, and typewriter (a test dependency of
// the server) needs React 16 where its own modules look for it; one node_modules cannot hold both.
// Skipped for production installs (`--omit=dev`), which never build the console, and when the
// console's sources are not there (a Docker layer that copied only the root manifests).
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const consoleDirectory = join(__dirname, '..', 'console');
const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);
if (omitted.includes('dev') || process.env.NODE_ENV === 'production') {
  console.log('[console] production install: the console is not installed');
  process.exit(0);
}
if (!existsSync(join(consoleDirectory, 'package-lock.json'))) {
  console.log('[console] no console/package-lock.json here: the console is not installed');
  process.exit(0);
}
const npm = process.env.npm_execpath;
const command = npm ? [process.execPath, npm] : ['npm'];
const result = spawnSync(command[0], [...command.slice(1), 'ci', '--no-audit', '--no-fund'], {
  cwd: consoleDirectory,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
