/**
 * CPU profiles of the bench process's own threads, for phases that run their subject in this process
 * (Actions: the lane's worker threads and the adapter's side on this thread), which the server's
 * profile (`cpu-profile.preload.js`) does not see. The main thread is profiled through an inspector
 * session; every worker thread started after `watchThreads()` (found through the `worker_threads`
 * diagnostics channel) through `Worker#startCpuProfile`, so the lane's code needs no hook of its own.
 * Each profile reads with `node test/bench/summarize-cpu-profile.js <file>`.
 */
import { subscribe } from 'node:diagnostics_channel';
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';

interface ProfileHandle {
  stop(): Promise<string>;
}

export interface ThreadProfiler {
  /** Starts a profile of this thread and of every worker thread still running. */
  start(): Promise<void>;
  /** Stops them and writes `<label>-main.cpuprofile` and `<label>-worker<threadId>.cpuprofile`. */
  stop(label: string): Promise<string[]>;
}

export function watchThreads(directory: string): ThreadProfiler {
  mkdirSync(directory, { recursive: true });
  const workers = new Set<Worker>();
  subscribe('worker_threads', (message) => {
    const { worker } = message as { worker: Worker };
    workers.add(worker);
    worker.once('exit', () => workers.delete(worker));
  });
  const session = new Session();
  session.connect();
  const post = <T>(method: string) =>
    new Promise<T>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))),
    );
  let running: { worker: Worker; threadId: number; handle: ProfileHandle }[] = [];
  return {
    async start() {
      await post('Profiler.enable');
      await post('Profiler.start');
      const started = await Promise.all(
        [...workers].map(async (worker) => {
          try {
            const handle = (await (
              worker as unknown as { startCpuProfile(): Promise<ProfileHandle> }
            ).startCpuProfile()) as ProfileHandle;
            return { worker, threadId: worker.threadId, handle };
          } catch {
            return undefined; // Not running (yet, or any more).
          }
        }),
      );
      running = started.filter((entry) => entry !== undefined);
    },
    async stop(label) {
      const files: string[] = [];
      const { profile } = await post<{ profile: unknown }>('Profiler.stop');
      const main = join(directory, `${label}-main.cpuprofile`);
      writeFileSync(main, JSON.stringify(profile));
      files.push(main);
      for (const { threadId, handle } of running) {
        const file = join(directory, `${label}-worker${threadId}.cpuprofile`);
        writeFileSync(file, await handle.stop());
        files.push(file);
      }
      running = [];
      return files;
    },
  };
}
