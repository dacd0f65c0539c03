/**
 * A forked process of a `ChildProcessLane`: starts the lane's program, then runs each call it is sent
 * through the program's tasks, several at a time (`LaneProgramRunner`). Service calls go back to the
 * process that started the lane. It ends when that process's IPC channel closes, so a lane's children
 * never outlive it.
 */
import {
  LaneProgramRunner,
  type LaneCallRequest,
  type LaneProgramMessage,
  type LaneServiceAnswer,
} from '../lane-program.runner';

/** From the lane to a child. The first message is always `start`. */
export type LaneChildRequest =
  | { readonly kind: 'start'; readonly program: string; readonly programData: unknown }
  | LaneCallRequest
  | LaneServiceAnswer;

/** From a child to the lane. */
export type LaneChildMessage = LaneProgramMessage;

if (process.send && process.env.TRIBUTARY_LANE_CHILD === '1') runChild();

function runChild(): void {
  const runner = new LaneProgramRunner((message) => {
    if (process.connected) process.send!(message);
  });
  process.on('message', (request: LaneChildRequest) => {
    switch (request.kind) {
      case 'start':
        return runner.start(request.program, request.programData);
      case 'service':
        return runner.settleService(request);
      case 'call':
        return runner.call(request);
    }
  });
  // The lane's process is gone (or closed the lane): nothing is left to answer to.
  process.on('disconnect', () => process.exit(0));
}
