#!/usr/bin/env node
// `npm start`'s build step: builds the server (`scripts/build-server.js`, swc) and the web console
// (`scripts/build-console.js`, vite) only when a source is newer than what was built last, so a start
// with nothing changed skips both. The console builds in the background while the server starts.
// `--force` rebuilds both.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const force = process.argv.includes('--force');
/** `--foreground`: wait for every build (the console's too) before returning. */
const foreground = process.argv.includes('--foreground');
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
    sources: ['apps', 'libs', 'tsconfig.json', 'package-lock.json'],
    command: [join(root, 'scripts', 'build-server.js')],
  },
  {
    name: 'console',
    output: 'console/dist/index.html',
    sources: ['console', 'libs/contracts/src', 'package-lock.json'],
    command: [join(root, 'scripts', 'build-console.js')],
    // The server does not need the console to start: it is built beside the running server, whose
    // /console answers a page that reloads itself until the build is there.
    background: true,
    busy: () => consoleBuildRunning(),
  },
];

for (const target of targets) {
  const built = builtAt(target.output);
  const changed = newestChange(target.sources);
  if (!force && built > 0 && built >= changed) {
    console.log(`[build] ${target.name}: up to date (${relative(root, join(root, target.output))})`);
    continue;
  }
  const why = built === 0 ? 'not built yet' : 'sources changed';
  if (target.busy?.()) {
    console.log(`[build] ${target.name}: a build is already under way`);
    continue;
  }
  if (target.background && !foreground) {
    console.log(`[build] ${target.name}: ${why}, building in the background while the server starts`);
    spawn(process.execPath, target.command, { cwd: root, stdio: 'inherit', detached: true }).unref();
    continue;
  }
  console.log(`[build] ${target.name}: ${why}, building`);
  run(target.name, target.command);
}

/** The marker `scripts/build-console.js` keeps while it runs, naming a live process. */
function consoleBuildRunning() {
  try {
    process.kill(Number(readFileSync(join(root, 'console', '.building'), 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

function run(what, command) {
  const result = spawnSync(process.execPath, command, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[build] ${what}: failed`);
    process.exit(result.status ?? 1);
  }
  return true;
}
