/**
 * An execution lane of forked Node processes (`child_process.fork`, advanced serialization): a fixed
 * number of processes, each with a heap limit (`--max-old-space-size`), each running many calls at
 * once. A process keeps what the program holds (native sandboxes, their memory) out of the address
 * space of the process that started the lane: a crash of native code ends one child, never the router.
 *
 * Every call has a watchdog: a call that has not answered within `callTimeoutMs` is answered `overrun`
 * and its process is killed. A call that runs its process out of heap while alone on it is answered
 * `overrun` too. A process that ends for any other reason answers its calls `ended` and is replaced by a
 * new one on the next call.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { ExecutionLane, LaneCallOptions, LaneFailure, LaneOutcome } from '../../execution-lane.port';
import type { LaneChildMessage, LaneChildRequest } from './lane.child';

export interface ChildProcessLaneOptions {
  /** Names the lane in failures: `functions`. */
  readonly name: string;
  /** The program's module (a file path), which exports `startLaneProgram`. */
  readonly program: string;
  /** Given to `startLaneProgram` in every process (serialized with the V8 serializer). */
  readonly programData?: unknown;
  /** Processes at most; each is started on first need. */
  readonly processes: number;
  /** Each process's old-generation heap limit, in MiB. */
  readonly heapMb: number;
  /**
   * The watchdog: how long a call may go unanswered before its process is killed, counted from when
   * the process is ready (its program started).
   */
  readonly callTimeoutMs: number;
  /** How long a process may take to start its program; default 60 s. */
  readonly startTimeoutMs?: number;
  /** Node flags the program needs (`--no-node-snapshot` for isolated-vm). */
  readonly execArgv?: readonly string[];
  /** What the program may ask of this process (`LaneServices.call`). */
  readonly services?: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
}

interface PendingCall {
  readonly resolve: (outcome: LaneOutcome<unknown>) => void;
  /** Its watchdog's budget (`LaneCallOptions.timeoutMs`, else the lane's `callTimeoutMs`). */
  readonly timeoutMs: number;
  watchdog?: NodeJS.Timeout;
}

/** What V8 prints when a heap limit is reached, just before it aborts. */
const OUT_OF_HEAP = /heap out of memory|Reached heap limit/;
/** The lines V8 prints before it (its last collections), which come first and may come alone. */
const HEAP_DUMP = /Last few GCs|allocation failure;|Mark-Compact|Scavenge/;

class LaneChild {
  readonly calls = new Map<number, PendingCall>();
  ready = false;
  onReady: (() => void) | undefined;
  ending: { failure: LaneFailure; detail: string } | undefined;
  ranOutOfHeap = false;
  /** Calls under way when the heap ran out (the stderr line comes before the exit). */
  callsAtOutOfHeap = 0;

  constructor(readonly process: ChildProcess) {}
}

export class ChildProcessLane implements ExecutionLane {
  private readonly children = new Set<LaneChild>();
  private nextCallId = 1;
  private closed = false;
  private readonly counts = { overruns: 0, processesEnded: 0 };

  constructor(private readonly options: ChildProcessLaneOptions) {}

  get stats(): { readonly processes: number; readonly overruns: number; readonly processesEnded: number } {
    return { processes: this.children.size, ...this.counts };
  }

  run<Result>(task: string, input: unknown, options?: LaneCallOptions): Promise<LaneOutcome<Result>> {
    if (this.closed) return Promise.resolve(failed('closed', `the ${this.options.name} lane is closed`));
    let child: LaneChild;
    try {
      child = this.pickChild();
    } catch (error) {
      return Promise.resolve(failed('failed', `cannot start a process: ${(error as Error).message}`));
    }
    const id = this.nextCallId++;
    return new Promise<LaneOutcome<Result>>((resolve) => {
      const call: PendingCall = {
        resolve: resolve as PendingCall['resolve'],
        timeoutMs: options?.timeoutMs ?? this.options.callTimeoutMs,
      };
      child.calls.set(id, call);
      if (child.ready) this.armWatchdog(child, id, call);
      this.send(child, { kind: 'call', id, task, input }, (error) =>
        this.answer(child, id, failed('failed', `input cannot be sent: ${error.message}`)),
      );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const children = [...this.children];
    await Promise.all(
      children.map((child) => {
        child.ending ??= { failure: 'closed', detail: `the ${this.options.name} lane is closed` };
        this.endCalls(child);
        return this.kill(child);
      }),
    );
  }

  private armWatchdog(child: LaneChild, id: number, call: PendingCall): void {
    call.watchdog = setTimeout(() => this.overrun(child, id, call.timeoutMs), call.timeoutMs);
  }

  /** Serialization errors are thrown synchronously; a closed channel is reported to the callback. */
  private send(child: LaneChild, message: LaneChildRequest, onError: (error: Error) => void): void {
    try {
      if (!child.process.connected) throw new Error('the process is gone');
      child.process.send(message, (error) => {
        if (error) onError(error);
      });
    } catch (error) {
      onError(error as Error);
    }
  }

  private pickChild(): LaneChild {
    let least: LaneChild | undefined;
    for (const child of this.children) {
      if (child.ending) continue;
      if (!least || child.calls.size < least.calls.size) least = child;
    }
    if (least && (least.calls.size === 0 || this.children.size >= this.options.processes)) return least;
    return this.startChild();
  }

  private startChild(): LaneChild {
    const script = childScript();
    const forked = fork(script.path, [], {
      serialization: 'advanced',
      execArgv: [
        ...script.execArgv,
        ...(this.options.execArgv ?? []),
        `--max-old-space-size=${this.options.heapMb}`,
      ],
      env: { ...process.env, TRIBUTARY_LANE_CHILD: '1' },
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    const child = new LaneChild(forked);
    this.children.add(child);
    const startTimeoutMs = this.options.startTimeoutMs ?? 60_000;
    const startWatchdog = setTimeout(() => {
      child.ending ??= {
        failure: 'failed',
        detail: `the ${this.options.name} lane's program did not start within ${startTimeoutMs} ms`,
      };
      this.endCalls(child);
      void this.kill(child);
    }, startTimeoutMs).unref();
    child.onReady = () => clearTimeout(startWatchdog);
    forked.stderr?.on('data', (chunk: Buffer) => {
      if (!child.ranOutOfHeap && OUT_OF_HEAP.test(chunk.toString('latin1'))) {
        child.ranOutOfHeap = true;
        child.callsAtOutOfHeap = child.calls.size;
      }
      // V8's dump is left out: the exit says what happened, and supervisors that read this process's
      // stderr (a test runner's workers, for one) would take it for this process running out of heap.
      if (!child.ranOutOfHeap && !HEAP_DUMP.test(chunk.toString('latin1'))) process.stderr.write(chunk);
    });
    forked.on('message', (message: LaneChildMessage) => this.onMessage(child, message));
    forked.on('error', (error) => {
      child.ending ??= {
        failure: 'ended',
        detail: `a process of the ${this.options.name} lane failed: ${error.message}`,
      };
    });
    forked.on('exit', (code, signal) => {
      clearTimeout(startWatchdog);
      this.children.delete(child);
      this.counts.processesEnded += 1;
      if (child.ranOutOfHeap && !child.ending) {
        const detail = `a process of the ${this.options.name} lane ran out of its ${this.options.heapMb} MiB heap`;
        // Alone in its process, the call is the one that filled the heap; beside others, no one can tell.
        if (child.callsAtOutOfHeap === 1) {
          this.counts.overruns += 1;
          child.ending = { failure: 'overrun', detail };
        } else child.ending = { failure: 'ended', detail };
      }
      child.ending ??= {
        failure: 'ended',
        detail: `a process of the ${this.options.name} lane ended (${signal ?? `exit code ${code}`})`,
      };
      this.endCalls(child);
    });
    // A lane with nothing to do does not keep the process alive.
    forked.unref();
    forked.channel?.unref();
    this.send(
      child,
      { kind: 'start', program: this.options.program, programData: this.options.programData },
      (error) => {
        child.ending ??= {
          failure: 'failed',
          detail: `the ${this.options.name} lane's program data cannot be sent: ${error.message}`,
        };
        this.endCalls(child);
        void this.kill(child);
      },
    );
    return child;
  }

  private onMessage(child: LaneChild, message: LaneChildMessage): void {
    switch (message.kind) {
      case 'answer':
        this.answer(
          child,
          message.id,
          message.error !== undefined ? failed('failed', message.error) : { ok: true, value: message.value },
        );
        return;
      case 'service':
        void this.serve(child, message.id, message.service, message.args);
        return;
      case 'startFailed':
        child.ending = {
          failure: 'failed',
          detail: `the ${this.options.name} lane's program did not start: ${message.error}`,
        };
        this.endCalls(child);
        void this.kill(child);
        return;
      case 'ready':
        child.ready = true;
        child.onReady?.();
        for (const [id, call] of child.calls) this.armWatchdog(child, id, call);
        return;
    }
  }

  private async serve(child: LaneChild, id: number, service: string, args: unknown[]): Promise<void> {
    const provider = this.options.services?.[service];
    let reply: LaneChildRequest;
    try {
      if (!provider) throw new Error(`no service ${JSON.stringify(service)}`);
      reply = { kind: 'service', id, value: await provider(...(args as never[])) };
    } catch (error) {
      reply = { kind: 'service', id, error: (error as Error).message ?? String(error) };
    }
    if (!child.ending) this.send(child, reply, () => undefined);
  }

  private overrun(child: LaneChild, id: number, timeoutMs: number): void {
    if (!child.calls.has(id)) return;
    this.counts.overruns += 1;
    this.answer(child, id, failed('overrun', `no answer within ${timeoutMs} ms; its process was ended`));
    child.ending ??= {
      failure: 'ended',
      detail: `a process of the ${this.options.name} lane was ended: another call in it overran`,
    };
    this.endCalls(child);
    void this.kill(child);
  }

  private answer(child: LaneChild, id: number, outcome: LaneOutcome<unknown>): void {
    const call = child.calls.get(id);
    if (!call) return;
    child.calls.delete(id);
    clearTimeout(call.watchdog);
    call.resolve(outcome);
  }

  private endCalls(child: LaneChild): void {
    const { failure, detail } = child.ending!;
    for (const id of [...child.calls.keys()]) this.answer(child, id, failed(failure, detail));
  }

  /** SIGKILL: a process busy in native code or a tight loop does not handle gentler signals. */
  private kill(child: LaneChild): Promise<void> {
    const { process: forked } = child;
    if (forked.exitCode !== null || forked.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      forked.once('exit', () => resolve());
      forked.kill('SIGKILL');
    });
  }
}

function failed(failure: LaneFailure, detail: string): LaneOutcome<never> {
  return { ok: false, failure, detail };
}

/** The child's script: compiled JavaScript, or the TypeScript source through the tests' require hook. */
function childScript(): { path: string; execArgv: string[] } {
  const extension = extname(__filename);
  const path = join(__dirname, `lane.child${extension}`);
  if (extension !== '.ts') return { path, execArgv: [] };
  const hook = join(__dirname, '..', '..', '..', '..', '..', 'test', 'support', 'swc-register.js');
  if (!existsSync(hook)) throw new Error(`cannot run a lane process from sources without ${hook}`);
  return { path, execArgv: ['--require', hook] };
}
