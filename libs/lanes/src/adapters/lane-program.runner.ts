/**
 * What runs inside a lane's worker, thread or process alike: starts the lane's program, runs each call
 * through the program's tasks (several at a time), and carries the program's service calls back to
 * whoever started the lane. The adapters differ only in how messages travel.
 */
import type { LaneServices, LaneTasks, StartLaneProgram } from '../execution-lane.port';

/** A call of the lane: run `task` with `input`. */
export interface LaneCallRequest {
  readonly kind: 'call';
  readonly id: number;
  readonly task: string;
  readonly input: unknown;
}

/** The lane's answer to a service call of the program. */
export interface LaneServiceAnswer {
  readonly kind: 'service';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

/** From a worker to the lane. */
export type LaneProgramMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'startFailed'; readonly error: string }
  | { readonly kind: 'answer'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly kind: 'service'; readonly id: number; readonly service: string; readonly args: unknown[] };

export class LaneProgramRunner {
  private readonly waitingServices = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private nextServiceId = 1;
  private started: Promise<LaneTasks> | undefined;
  readonly services: LaneServices = {
    call: <Result>(service: string, ...args: unknown[]): Promise<Result> => {
      const id = this.nextServiceId++;
      return new Promise<Result>((resolve, reject) => {
        this.waitingServices.set(id, { resolve: resolve as (value: unknown) => void, reject });
        this.send({ kind: 'service', id, service, args });
      });
    },
  };

  constructor(private readonly send: (message: LaneProgramMessage) => void) {}

  /** Starts the program once (a second start is ignored); says `ready` or `startFailed`. */
  start(program: string, programData: unknown): void {
    if (this.started) return;
    this.started = (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const module = require(program) as { startLaneProgram?: StartLaneProgram };
      if (typeof module.startLaneProgram !== 'function') {
        throw new Error(`${program} exports no startLaneProgram`);
      }
      return module.startLaneProgram(programData as never, this.services);
    })();
    this.started.then(
      () => this.send({ kind: 'ready' }),
      (error: unknown) => this.send({ kind: 'startFailed', error: messageOf(error) }),
    );
  }

  settleService(answer: LaneServiceAnswer): void {
    const waiting = this.waitingServices.get(answer.id);
    this.waitingServices.delete(answer.id);
    if (answer.error !== undefined) waiting?.reject(new Error(answer.error));
    else waiting?.resolve(answer.value);
  }

  /** Runs the call and answers it, with the task's error when it fails; never throws. */
  call(request: LaneCallRequest): void {
    void (this.started ?? Promise.reject(new Error('the program was not started')))
      .then((tasks) => {
        const task = Object.hasOwn(tasks, request.task) ? tasks[request.task] : undefined;
        if (!task) throw new Error(`no task ${JSON.stringify(request.task)}`);
        return task(request.input as never);
      })
      .then(
        (value) => {
          try {
            this.send({ kind: 'answer', id: request.id, value });
          } catch (error) {
            // A result that cannot be copied is the task's fault, not the worker's.
            this.send({ kind: 'answer', id: request.id, error: messageOf(error) });
          }
        },
        (error: unknown) => this.send({ kind: 'answer', id: request.id, error: messageOf(error) }),
      );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
