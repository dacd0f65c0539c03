/**
 * A forked process of a `ChildProcessLane`: starts the lane's program, then runs each call it is sent
 * through the program's tasks, several at a time. Service calls go back to the process that started
 * the lane. It ends when that process's IPC channel closes, so a lane's children never outlive it.
 */
import type { LaneServices, LaneTasks, StartLaneProgram } from '../../execution-lane.port';

/** From the lane to a child. The first message is always `start`. */
export type LaneChildRequest =
  | { readonly kind: 'start'; readonly program: string; readonly programData: unknown }
  | { readonly kind: 'call'; readonly id: number; readonly task: string; readonly input: unknown }
  | { readonly kind: 'service'; readonly id: number; readonly value?: unknown; readonly error?: string };

/** From a child to the lane. */
export type LaneChildMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'startFailed'; readonly error: string }
  | { readonly kind: 'answer'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly kind: 'service'; readonly id: number; readonly service: string; readonly args: unknown[] };

if (process.send && process.env.TRIBUTARY_LANE_CHILD === '1') runChild();

function runChild(): void {
  const send = (message: LaneChildMessage) => {
    if (process.connected) process.send!(message);
  };
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
  let started: Promise<LaneTasks> | undefined;
  const start = (program: string, programData: unknown): Promise<LaneTasks> => {
    const starting = (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const module = require(program) as { startLaneProgram?: StartLaneProgram };
      if (typeof module.startLaneProgram !== 'function')
        throw new Error(`${program} exports no startLaneProgram`);
      return module.startLaneProgram(programData as never, services);
    })();
    starting.then(
      () => send({ kind: 'ready' }),
      (error: unknown) => send({ kind: 'startFailed', error: messageOf(error) }),
    );
    return starting;
  };
  process.on('message', (request: LaneChildRequest) => {
    switch (request.kind) {
      case 'start':
        started ??= start(request.program, request.programData);
        return;
      case 'service': {
        const waiting = waitingServices.get(request.id);
        waitingServices.delete(request.id);
        if (request.error !== undefined) waiting?.reject(new Error(request.error));
        else waiting?.resolve(request.value);
        return;
      }
      case 'call':
        void (started ?? Promise.reject(new Error('the program was not started')))
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
                // A result that cannot be serialized is the task's fault, not the process's.
                send({ kind: 'answer', id: request.id, error: messageOf(error) });
              }
            },
            (error: unknown) => send({ kind: 'answer', id: request.id, error: messageOf(error) }),
          );
        return;
    }
  });
  // The lane's process is gone (or closed the lane): nothing is left to answer to.
  process.on('disconnect', () => process.exit(0));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
