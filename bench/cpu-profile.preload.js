// Preloaded into the Tributary server by `BENCH_CPU_PROFILE=1 npm run bench`: SIGUSR2 starts a V8 CPU
// profile, the next SIGUSR2 writes it to $BENCH_CPU_PROFILE_DIR and prints its path. Toggled by signal
// rather than `--cpu-prof` so the profile covers only the measured load (not start-up and compilation),
// and because `--cpu-prof` writes nothing when the process ends by a signal, as Nest's shutdown does.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const session = new inspector.Session();
session.connect();
let profiling = false;

process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    session.post('Profiler.enable', () => session.post('Profiler.start'));
    return;
  }
  profiling = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) {
      console.log(`cpu profile failed: ${error.message}`);
      return;
    }
    const file = join(process.env.BENCH_CPU_PROFILE_DIR ?? '.', `tributary-server-${process.pid}.cpuprofile`);
    writeFileSync(file, JSON.stringify(result.profile));
    console.log(`cpu profile written: ${file}`);
  });
});
