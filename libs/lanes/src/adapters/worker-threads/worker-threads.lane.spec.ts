import { LANE_TEST_PROGRAM } from '../../execution-lane.contract';
import { WorkerThreadsLane } from './worker-threads.lane';

// What every lane does is in execution-lane.contract.ts; this is what only worker threads do.
jest.setTimeout(60_000);

describe('WorkerThreadsLane', () => {
  const lanes: WorkerThreadsLane[] = [];
  afterAll(async () => {
    await Promise.all(lanes.map((lane) => lane.close()));
  });
  const started = (callTimeoutMs = 5_000) => {
    const lane = new WorkerThreadsLane({
      name: 'test',
      program: LANE_TEST_PROGRAM,
      programData: { greeting: 'hello' },
      workers: 1,
      heapMb: 64,
      callTimeoutMs,
    });
    lanes.push(lane);
    return lane;
  };

  it('runs several calls on one worker and counts the workers it ended', async () => {
    const subject = started(1_000);
    await Promise.all([subject.run('echo', 1), subject.run('wait', 20)]);
    expect(subject.stats).toEqual({ workers: 1, overruns: 0, workersEnded: 0 });
    await subject.run('spin', null);
    await expect(subject.run('echo', 'again')).resolves.toMatchObject({ ok: true });
    expect(subject.stats).toEqual({ workers: 1, overruns: 1, workersEnded: 1 });
  });
});
