export * from './execution-lane.port';
export {
  WorkerThreadsLane,
  type WorkerThreadsLaneOptions,
} from './adapters/worker-threads/worker-threads.lane';
export { ChildProcessLane, type ChildProcessLaneOptions } from './adapters/child-process/child-process.lane';
