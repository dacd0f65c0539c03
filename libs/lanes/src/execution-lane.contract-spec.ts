import { ChildProcessLane } from './adapters/child-process/child-process.lane';
import { WorkerThreadsLane } from './adapters/worker-threads/worker-threads.lane';
import { describeExecutionLaneContract } from './execution-lane.contract';

describeExecutionLaneContract('worker threads', {
  open: (options) => new WorkerThreadsLane({ name: 'test', workers: 1, ...options }),
  smallHeapMb: 32,
  runner: 'worker',
});

describeExecutionLaneContract('child processes', {
  open: (options) => new ChildProcessLane({ name: 'test', processes: 1, ...options }),
  smallHeapMb: 64,
  runner: 'process',
});
