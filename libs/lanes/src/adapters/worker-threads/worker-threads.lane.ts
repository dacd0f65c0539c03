/**
 * An execution lane of worker threads (`node:worker_threads`): a fixed number of workers, each with a
 * heap limit (`resourceLimits`), each running many calls at once (the tasks it was made for wait on the
 * network most of the time). Every call has a watchdog: a call that has not answered within
 * `callTimeoutMs` is answered `overrun` and its worker is terminated, which is the only way to stop
 * JavaScript that does not yield (a mapping that expands without end, a tight loop). A call that runs
 * its worker out of heap while alone on it is answered `overrun` too. A worker that ends for any other
 * reason answers its calls `ended` and is replaced by a new one on the next call. The process that started the lane goes on whatever its workers do.
 */
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ExecutionLane, LaneCallOptions, LaneFailure, LaneOutcome } from '../../execution-lane.port';
import type { LaneWorkerData, LaneWorkerMessage, LaneWorkerRequest } from './lane.worker';

export interface WorkerThreadsLaneOptions {
  /** Names the lane in failures: `actions`. */
  readonly name: string;
  /** The program's module (a file path), which exports `startLaneProgram`. */
  readonly program: string;
  /** Given to `startLaneProgram` in every worker (structured-cloned). */
  readonly programData?: unknown;
  /** Workers at most; each is started on first need. */
  readonly workers: number;
  /** Each worker's old-generation heap limit, in MiB. */
  readonly heapMb: number;
  /**
   * The watchdog: how long a call may go unanswered before its worker is terminated, counted from when
   * the worker is ready (its program started).
   */
  readonly callTimeoutMs: number;
  /** How long a worker may take to start its program; default 60 s. */
  readonly startTimeoutMs?: number;
  /** What the program may ask of this thread (`LaneServices.call`). */
  readonly services?: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
}

interface PendingCall {
  readonly resolve: (outcome: LaneOutcome<unknown>) => void;
  /** Its watchdog's budget (`LaneCallOptions.timeoutMs`, else the lane's `callTimeoutMs`). */
  readonly timeoutMs: number;
  watchdog?: NodeJS.Timeout;
}

class LaneWorker {
  readonly calls = new Map<number, PendingCall>();
  /** Until its program has started, calls wait without their watchdog (loading code is not theirs). */
  ready = false;
  onReady: (() => void) | undefined;
  /** Why the worker is ending, once it is: given to the calls it still holds. */
  ending: { failure: LaneFailure; detail: string } | undefined;

  constructor(readonly thread: Worker) {}
}

export class WorkerThreadsLane implements ExecutionLane {
  private readonly workers = new Set<LaneWorker>();
  private nextCallId = 1;
  private closed = false;
  /** Calls answered `overrun`, and workers that ended, since the lane started. */
  private readonly counts = { overruns: 0, workersEnded: 0 };

  constructor(private readonly options: WorkerThreadsLaneOptions) {}

  get stats(): { readonly workers: number; readonly overruns: number; readonly workersEnded: number } {
    return { workers: this.workers.size, ...this.counts };
  }

  run<Result>(task: string, input: unknown, options?: LaneCallOptions): Promise<LaneOutcome<Result>> {
    if (this.closed) return Promise.resolve(failed('closed', `the ${this.options.name} lane is closed`));
    const worker = this.pickWorker();
    const id = this.nextCallId++;
    return new Promise<LaneOutcome<Result>>((resolve) => {
      const call: PendingCall = {
        resolve: resolve as PendingCall['resolve'],
        timeoutMs: options?.timeoutMs ?? this.options.callTimeoutMs,
      };
      worker.calls.set(id, call);
      if (worker.ready) this.armWatchdog(worker, id, call);
      const request: LaneWorkerRequest = { kind: 'call', id, task, input };
      try {
        worker.thread.postMessage(request);
      } catch (error) {
        this.answer(worker, id, failed('failed', `input cannot be sent: ${(error as Error).message}`));
      }
    });
  }

  private armWatchdog(worker: LaneWorker, id: number, call: PendingCall): void {
    call.watchdog = setTimeout(() => this.overrun(worker, id, call.timeoutMs), call.timeoutMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.workers];
    for (const worker of workers) {
      worker.ending ??= { failure: 'closed', detail: `the ${this.options.name} lane is closed` };
      this.endCalls(worker);
    }
    await Promise.all(workers.map((worker) => worker.thread.terminate()));
  }

  /** The worker with the fewest calls under way; a new one while there are fewer than `workers`. */
  private pickWorker(): LaneWorker {
    let least: LaneWorker | undefined;
    for (const worker of this.workers) {
      if (worker.ending) continue;
      if (!least || worker.calls.size < least.calls.size) least = worker;
    }
    if (least && (least.calls.size === 0 || this.workers.size >= this.options.workers)) return least;
    return this.startWorker();
  }

  private startWorker(): LaneWorker {
    const script = workerScript();
    const data: LaneWorkerData = { program: this.options.program, programData: this.options.programData };
    const worker = new LaneWorker(
      new Worker(script.path, {
        workerData: data,
        execArgv: script.execArgv,
        resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      }),
    );
    this.workers.add(worker);
    const { thread } = worker;
    const startTimeoutMs = this.options.startTimeoutMs ?? 60_000;
    const startWatchdog = setTimeout(() => {
      worker.ending ??= {
        failure: 'failed',
        detail: `the ${this.options.name} lane's program did not start within ${startTimeoutMs} ms`,
      };
      this.endCalls(worker);
      void thread.terminate();
    }, startTimeoutMs).unref();
    thread.once('exit', () => clearTimeout(startWatchdog));
    worker.onReady = () => clearTimeout(startWatchdog);
    thread.on('message', (message: LaneWorkerMessage) => this.onMessage(worker, message));
    thread.on('error', (error: Error & { code?: string }) => {
      if (error.code !== 'ERR_WORKER_OUT_OF_MEMORY') {
        worker.ending ??= {
          failure: 'ended',
          detail: `a worker of the ${this.options.name} lane crashed: ${error.message}`,
        };
        return;
      }
      const detail = `a worker of the ${this.options.name} lane ran out of its ${this.options.heapMb} MiB heap`;
      // Alone on its worker, the call is the one that filled the heap; beside others, no one can tell.
      if (!worker.ending && worker.calls.size === 1) {
        this.counts.overruns += 1;
        worker.ending = { failure: 'overrun', detail };
      } else worker.ending ??= { failure: 'ended', detail };
    });
    thread.on('exit', () => {
      this.workers.delete(worker);
      this.counts.workersEnded += 1;
      worker.ending ??= { failure: 'ended', detail: `a worker of the ${this.options.name} lane ended` };
      this.endCalls(worker);
    });
    // A lane with nothing to do does not keep the process alive.
    thread.unref();
    return worker;
  }

  private onMessage(worker: LaneWorker, message: LaneWorkerMessage): void {
    switch (message.kind) {
      case 'answer':
        this.answer(
          worker,
          message.id,
          message.error !== undefined ? failed('failed', message.error) : { ok: true, value: message.value },
        );
        return;
      case 'service':
        void this.serve(worker, message.id, message.service, message.args);
        return;
      case 'startFailed':
        worker.ending = {
          failure: 'failed',
          detail: `the ${this.options.name} lane's program did not start: ${message.error}`,
        };
        this.endCalls(worker);
        void worker.thread.terminate();
        return;
      case 'ready':
        worker.ready = true;
        worker.onReady?.();
        for (const [id, call] of worker.calls) this.armWatchdog(worker, id, call);
        return;
    }
  }

  private async serve(worker: LaneWorker, id: number, service: string, args: unknown[]): Promise<void> {
    const provider = this.options.services?.[service];
    let reply: LaneWorkerRequest;
    try {
      if (!provider) throw new Error(`no service ${JSON.stringify(service)}`);
      reply = { kind: 'service', id, value: await provider(...(args as never[])) };
    } catch (error) {
      reply = { kind: 'service', id, error: (error as Error).message ?? String(error) };
    }
    if (!worker.ending) worker.thread.postMessage(reply);
  }

  private overrun(worker: LaneWorker, id: number, timeoutMs: number): void {
    if (!worker.calls.has(id)) return;
    this.counts.overruns += 1;
    this.answer(worker, id, failed('overrun', `no answer within ${timeoutMs} ms; its worker was ended`));
    worker.ending ??= {
      failure: 'ended',
      detail: `a worker of the ${this.options.name} lane was ended: another call on it overran`,
    };
    this.endCalls(worker);
    void worker.thread.terminate();
  }

  private answer(worker: LaneWorker, id: number, outcome: LaneOutcome<unknown>): void {
    const call = worker.calls.get(id);
    if (!call) return;
    worker.calls.delete(id);
    clearTimeout(call.watchdog);
    call.resolve(outcome);
  }

  private endCalls(worker: LaneWorker): void {
    const { failure, detail } = worker.ending!;
    for (const id of [...worker.calls.keys()]) this.answer(worker, id, failed(failure, detail));
  }
}

function failed(failure: LaneFailure, detail: string): LaneOutcome<never> {
  return { ok: false, failure, detail };
}

/** The worker's script: compiled JavaScript, or the TypeScript source through the tests' require hook. */
function workerScript(): { path: string; execArgv: string[] } {
  const extension = extname(__filename);
  const path = join(__dirname, `lane.worker${extension}`);
  if (extension !== '.ts') return { path, execArgv: [] };
  const hook = join(__dirname, '..', '..', '..', '..', '..', 'test', 'support', 'swc-register.js');
  if (!existsSync(hook)) throw new Error(`cannot run a lane worker from sources without ${hook}`);
  return { path, execArgv: ['--require', hook] };
}
