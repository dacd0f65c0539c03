// The chaos test (`*.chaos-spec.ts`) runs on its own, never in `npm test`: it starts a whole cluster
// and kills parts of it for a few minutes. `npm run test:chaos` builds the apps first (it runs their
// built entry points) and runs it with this configuration.
const base = require('../../jest.config');

module.exports = {
  ...base,
  rootDir: '../..',
  testRegex: '.*\\.chaos-spec\\.ts$',
  testTimeout: 600_000,
  maxWorkers: 1,
  // A NATS connection of a failed start must not keep the step running past its bound.
  forceExit: true,
};
