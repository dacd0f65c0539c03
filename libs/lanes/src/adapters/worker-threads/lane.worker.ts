/**
 * A worker thread of a `WorkerThreadsLane`: starts the lane's program, then runs each call it is sent
 * through the program's tasks, several at a time (they are mostly waiting on the network). Service
 * calls go back to the thread that started the lane.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LaneServices, LaneTasks, StartLaneProgram } from '../../execution-lane.port';

export interface LaneWorkerData {
  /** The program's module, which exports `startLaneProgram`. */
  readonly program: string;
  readonly programData: unknown;
}

/** From the lane to a worker. */
export type LaneWorkerRequest =
  | { readonly kind: 'call'; readonly id: number; readonly task: string; readonly input: unknown }
  | { readonly kind: 'service'; readonly id: number; readonly value?: unknown; readonly error?: string };

/** From a worker to the lane. */
export type LaneWorkerMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'startFailed'; readonly error: string }
  | { readonly kind: 'answer'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly kind: 'service'; readonly id: number; readonly service: string; readonly args: unknown[] };

if (parentPort) runWorker(parentPort, workerData as LaneWorkerData);

function runWorker(port: NonNullable<typeof parentPort>, data: LaneWorkerData): void {
  const send = (message: LaneWorkerMessage) => port.postMessage(message);
  const waitingServices = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextServiceId = 1;
  const services: LaneServices = {
    call<Result>(service: string, ...args: unknown[]): Promise<Result> {
      const id = nextServiceId++;
      return new Promise<Result>((resolve, reject) => {
        waitingServices.set(id, { resolve: resolve as (value: unknown) => void, reject });
        send({ kind: 'service', id, service, args });
      });
    },
  };
  const started: Promise<LaneTasks> = (async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const program = require(data.program) as { startLaneProgram?: StartLaneProgram };
    if (typeof program.startLaneProgram !== 'function') {
      throw new Error(`${data.program} exports no startLaneProgram`);
    }
    return program.startLaneProgram(data.programData as never, services);
  })();
  started.then(
    () => send({ kind: 'ready' }),
    (error: unknown) => send({ kind: 'startFailed', error: messageOf(error) }),
  );
  port.on('message', (request: LaneWorkerRequest) => {
    if (request.kind === 'service') {
      const waiting = waitingServices.get(request.id);
      waitingServices.delete(request.id);
      if (request.error !== undefined) waiting?.reject(new Error(request.error));
      else waiting?.resolve(request.value);
      return;
    }
    void started
      .then((tasks) => {
        const task = Object.hasOwn(tasks, request.task) ? tasks[request.task] : undefined;
        if (!task) throw new Error(`no task ${JSON.stringify(request.task)}`);
        return task(request.input as never);
      })
      .then(
        (value) => {
          try {
            send({ kind: 'answer', id: request.id, value });
          } catch (error) {
            // A result that cannot be cloned is the task's fault, not the worker's.
            send({ kind: 'answer', id: request.id, error: messageOf(error) });
          }
        },
        (error: unknown) => send({ kind: 'answer', id: request.id, error: messageOf(error) }),
      );
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
