#!/usr/bin/env node
// `tributary`: the operator CLI. First Ctrl-C stops the command in its own way (an import finishes the
// batch in flight and keeps its resume point; `tail` and `replays --wait` stop at once); a second one
// quits at once (an import's resume point then still holds the last accepted batch).
import { runCli } from './cli.program';

const interrupt = new AbortController();
let interrupts = 0;
const onSignal = (signal: NodeJS.Signals) => {
  interrupts += 1;
  if (interrupts > 1) process.exit(130);
  process.stderr.write(`\n${signal}: stopping (an import finishes the batch in flight; again to quit now)\n`);
  interrupt.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  interrupt: interrupt.signal,
}).then(
  (code) => {
    process.exitCode = code;
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  },
  (error) => {
    process.stderr.write(`${String(error)}\n`);
    process.exitCode = 1;
  },
);
