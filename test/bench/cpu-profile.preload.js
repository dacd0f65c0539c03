// Preloaded into the Tributary server by `BENCH_CPU_PROFILE=1 npm run bench`, which spawns the server
// with an IPC channel: the message "start-cpu-profile" starts a V8 CPU profile, "stop-cpu-profile"
// (or { command: "stop-cpu-profile", label }, the label naming the phase in the file name) writes it
// to $BENCH_CPU_PROFILE_DIR and answers with its path. Driven by the bench rather than `--cpu-prof` so
// the profile covers only the measured load (not start-up and compilation), and because `--cpu-prof`
// writes nothing when the process ends by a signal, as Nest's shutdown does.
// (Not a signal: Nest's shutdown hooks treat SIGUSR2 as a shutdown request.)
// With BENCH_HEAP_PROFILE=1 it also samples allocations over the same span, the objects that minor and
// major GCs collected included (what was allocated, not what is left), and writes a .heapprofile beside
// the CPU profile (summarize one with `node test/bench/summarize-heap-profile.js FILE`).
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const sampleAllocations = process.env.BENCH_HEAP_PROFILE === '1';
/** One sample per this many bytes allocated. */
const HEAP_SAMPLING_INTERVAL = 16_384;

if (process.channel) {
  // The channel must not keep the server alive on its own.
  process.channel.unref();
  const session = new inspector.Session();
  session.connect();
  const directory = process.env.BENCH_CPU_PROFILE_DIR ?? '.';
  process.on('message', (message) => {
    if (message === 'start-cpu-profile') {
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      if (sampleAllocations) {
        session.post('HeapProfiler.enable', () =>
          session.post('HeapProfiler.startSampling', {
            samplingInterval: HEAP_SAMPLING_INTERVAL,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          }),
        );
      }
    } else if (message === 'stop-cpu-profile' || message?.command === 'stop-cpu-profile') {
      const label = typeof message?.label === 'string' ? `-${message.label.replace(/[^\w-]/g, '')}` : '';
      if (sampleAllocations) {
        session.post('HeapProfiler.stopSampling', (error, result) => {
          if (error) return;
          const file = join(directory, `tributary-server-${process.pid}${label}.heapprofile`);
          writeFileSync(file, JSON.stringify(result.profile));
        });
      }
      session.post('Profiler.stop', (error, result) => {
        if (error) {
          process.send({ cpuProfileError: error.message });
          return;
        }
        const file = join(directory, `tributary-server-${process.pid}${label}.cpuprofile`);
        writeFileSync(file, JSON.stringify(result.profile));
        process.send({ cpuProfileFile: file });
      });
    }
  });
}
