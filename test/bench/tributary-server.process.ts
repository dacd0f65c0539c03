import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverStartFlags } from '../support/server-start-flags';
import { round } from './load-loop';

/**
 * A process's CPU time (user and system) so far in ms, from `/proc`, or one of its threads' with
 * `thread` (its main thread's id is the process id); null off Linux or once it is gone.
 */
export function processCpuTimeMs(pid: number, thread?: number): number | null {
  try {
    const stat = readFileSync(
      thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
      'utf8',
    );
    // Fields after the command name (which may contain spaces) start at ")"; utime and stime are 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticksPerSecond = 100; // USER_HZ, 100 on every mainstream Linux
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** CPU ms per 1,000 messages between two `processCpuTimeMs` readings; null when either is missing. */
export function cpuMsPerThousand(
  beforeMs: number | null,
  afterMs: number | null,
  messages: number,
): number | null {
  return beforeMs === null || afterMs === null ? null : round(((afterMs - beforeMs) / messages) * 1000, 2);
}

/**
 * Tributary's real entry point (`apps/tributary/src/main.ts`) in a child process, compiled on load by
 * `test/support/swc-register.js`. A separate process keeps the load generator off the server's event loop, so
 * latencies are the server's, and lets the bench read the server's own peak RSS and CPU time.
 */
export class TributaryServerProcess {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(options: {
    environment: Record<string, string>;
    /** Node flags for the server after those it is started with, such as `--require` of a preload. */
    nodeOptions?: string[];
    /** Opens an IPC channel to the server (for `test/bench/cpu-profile.preload.js`). */
    ipc?: boolean;
    /**
     * Another server to run the same way, from the repository's root (`test/bench/ingest-floor.server.ts`);
     * it must print `listening on http://<host>:<port>` as main.ts does.
     */
    script?: string;
  }): Promise<TributaryServerProcess> {
    const repositoryRoot = join(__dirname, '..', '..');
    const child = spawn(
      process.execPath,
      [
        ...serverStartFlags(),
        ...(options.nodeOptions ?? []),
        '--require',
        join(repositoryRoot, 'test/support/swc-register.js'),
        join(repositoryRoot, options.script ?? 'apps/tributary/src/main.ts'),
      ],
      {
        cwd: repositoryRoot,
        // Every receiver of the bench is on loopback, which the default egress policy refuses.
        env: { ...process.env, TRIBUTARY_EGRESS: 'open', ...options.environment },
        stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);

    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error('did not listen within 30 s')), 30_000);
      const fail = (error: Error) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(`tributary failed to start: ${error.message}\n${output}`));
      };
      child.once('exit', (code, signal) => fail(new Error(`exited with ${signal ?? code}`)));
      child.once('error', fail);
      const watch = () => {
        // main.ts logs "tributary listening on http://127.0.0.1:<port> (...)" once it listens.
        const match = /listening on (http:\/\/[^\s]+)/.exec(output);
        if (!match) return;
        clearTimeout(timer);
        child.stdout!.off('data', watch);
        child.removeAllListeners('exit');
        resolve(match[1]);
      };
      child.stdout!.on('data', watch);
    });

    const server = new TributaryServerProcess(child, baseUrl);
    server.output = output;
    child.stdout!.on(
      'data',
      (chunk: Buffer) => (server.output = (server.output + chunk.toString()).slice(-8000)),
    );
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (server.output = (server.output + chunk.toString()).slice(-8000)),
    );
    return server;
  }

  /** What the server printed last (for failure reports). */
  get recentOutput(): string {
    return this.output;
  }

  /** Resident set size now and at its peak, in bytes (Linux /proc; null elsewhere). */
  memory(): { rssBytes: number; peakRssBytes: number } | null {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kilobytes = (field: string) =>
        Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
      return { rssBytes: kilobytes('VmRSS') * 1024, peakRssBytes: kilobytes('VmHWM') * 1024 };
    } catch {
      return null;
    }
  }

  /** User plus system CPU time the server has used, in milliseconds (Linux /proc; null elsewhere). */
  cpuTimeMs(): number | null {
    return processCpuTimeMs(this.pid);
  }

  /** With `test/bench/cpu-profile.preload.js` loaded (and `ipc`): starts a CPU profile of the server. */
  startCpuProfile(): void {
    this.child.send('start-cpu-profile');
  }

  /**
   * Stops the profile started by `startCpuProfile`, and resolves to the file the server wrote:
   * `tributary-server-<pid>-<label>.cpuprofile`, so the profiles of several phases do not overwrite each other.
   */
  async stopCpuProfile(label: string): Promise<string> {
    const report = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error('the server wrote no CPU profile within 30 s')),
        30_000,
      );
      const finish = (outcome: string | Error) => {
        clearTimeout(timer);
        this.child.off('message', listen);
        if (typeof outcome === 'string') resolve(outcome);
        else reject(outcome);
      };
      const listen = (message: { cpuProfileFile?: string; cpuProfileError?: string }) => {
        if (message.cpuProfileFile) finish(message.cpuProfileFile);
        else if (message.cpuProfileError) finish(new Error(`CPU profile failed: ${message.cpuProfileError}`));
      };
      this.child.on('message', listen);
    });
    this.child.send({ command: 'stop-cpu-profile', label });
    return report;
  }

  /** SIGTERM (Nest closes the HTTP server and the NATS connection), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const killTimer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killTimer);
  }

  /** Last resort from a synchronous `exit` handler. */
  killNow(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
