#!/usr/bin/env node
// The `tributary` command: runs the compiled CLI (`npm run build:cli`, i.e. `nest build cli`) when it
// exists, and otherwise the TypeScript sources through the swc require hook used by the tests.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const compiled = join(root, 'dist', 'apps', 'cli', 'src', 'main.js');
if (existsSync(compiled) && process.env.TRIBUTARY_CLI_FROM_SOURCE !== '1') {
  require(compiled);
} else {
  require(join(root, 'test', 'support', 'swc-register.js'));
  require(join(root, 'apps', 'cli', 'src', 'main.ts'));
}
