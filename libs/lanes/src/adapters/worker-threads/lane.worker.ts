/**
 * A worker thread of a `WorkerThreadsLane`: starts the lane's program, then runs each call it is sent
 * through the program's tasks, several at a time (they are mostly waiting on the network;
 * `LaneProgramRunner`). Service calls go back to the thread that started the lane.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  LaneProgramRunner,
  type LaneCallRequest,
  type LaneProgramMessage,
  type LaneServiceAnswer,
} from '../lane-program.runner';

export interface LaneWorkerData {
  /** The program's module, which exports `startLaneProgram`. */
  readonly program: string;
  readonly programData: unknown;
}

/** From the lane to a worker. */
export type LaneWorkerRequest = LaneCallRequest | LaneServiceAnswer;

/** From a worker to the lane. */
export type LaneWorkerMessage = LaneProgramMessage;

if (parentPort) runWorker(parentPort, workerData as LaneWorkerData);

function runWorker(port: NonNullable<typeof parentPort>, data: LaneWorkerData): void {
  const runner = new LaneProgramRunner((message) => port.postMessage(message));
  runner.start(data.program, data.programData);
  port.on('message', (request: LaneWorkerRequest) => {
    if (request.kind === 'service') runner.settleService(request);
    else runner.call(request);
  });
}
