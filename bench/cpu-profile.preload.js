// Preloaded into the Tributary server by `BENCH_CPU_PROFILE=1 npm run bench`, which spawns the server
// with an IPC channel: the message "start-cpu-profile" starts a V8 CPU profile, "stop-cpu-profile"
// (or { command: "stop-cpu-profile", label }, the label naming the phase in the file name) writes it
// to $BENCH_CPU_PROFILE_DIR and answers with its path. Driven by the bench rather than `--cpu-prof` so
// the profile covers only the measured load (not start-up and compilation), and because `--cpu-prof`
// writes nothing when the process ends by a signal, as Nest's shutdown does.
// (Not a signal: Nest's shutdown hooks treat SIGUSR2 as a shutdown request.)
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

if (process.channel) {
  // The channel must not keep the server alive on its own.
  process.channel.unref();
  const session = new inspector.Session();
  session.connect();
  process.on('message', (message) => {
    if (message === 'start-cpu-profile') {
      session.post('Profiler.enable', () => session.post('Profiler.start'));
    } else if (message === 'stop-cpu-profile' || message?.command === 'stop-cpu-profile') {
      const label = typeof message?.label === 'string' ? `-${message.label.replace(/[^\w-]/g, '')}` : '';
      session.post('Profiler.stop', (error, result) => {
        if (error) {
          process.send({ cpuProfileError: error.message });
          return;
        }
        const file = join(
          process.env.BENCH_CPU_PROFILE_DIR ?? '.',
          `tributary-server-${process.pid}${label}.cpuprofile`,
        );
        writeFileSync(file, JSON.stringify(result.profile));
        process.send({ cpuProfileFile: file });
      });
    }
  });
}
