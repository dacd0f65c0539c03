import { LANE_TEST_PROGRAM } from '../../execution-lane.contract';
import { ChildProcessLane, type ChildProcessLaneOptions } from './child-process.lane';

// What every lane does is in execution-lane.contract.ts; this is what only child processes do.
jest.setTimeout(60_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('ChildProcessLane', () => {
  const lanes: ChildProcessLane[] = [];
  afterAll(async () => {
    await Promise.all(lanes.map((lane) => lane.close()));
  });
  const started = (options: Partial<ChildProcessLaneOptions> = {}) => {
    const lane = new ChildProcessLane({
      name: 'test',
      program: LANE_TEST_PROGRAM,
      programData: { greeting: 'hello' },
      processes: 1,
      heapMb: 128,
      callTimeoutMs: 5_000,
      ...options,
    });
    lanes.push(lane);
    return lane;
  };

  it('runs calls in a process of its own, started once, and counts what it ended', async () => {
    const subject = started({ callTimeoutMs: 1_000 });
    const outcomes = await Promise.all([subject.run<number>('pid', null), subject.run<number>('pid', null)]);
    expect(outcomes[0]).toEqual(outcomes[1]);
    const pid = (outcomes[0] as { value: number }).value;
    expect(pid).not.toBe(process.pid);
    expect(subject.stats).toEqual({ processes: 1, overruns: 0, processesEnded: 0 });
    await subject.run('spin', null);
    await until(() => !alive(pid));
    await expect(subject.run('echo', 'again')).resolves.toMatchObject({ ok: true });
    expect(subject.stats).toEqual({ processes: 1, overruns: 1, processesEnded: 1 });
  });

  it('spreads calls over up to `processes` processes', async () => {
    const subject = started({ processes: 2 });
    await subject.run('echo', 'warm');
    const [first, second] = await Promise.all([
      subject.run<number>('pid', null),
      subject.run<number>('pid', null),
      subject.run('wait', 100),
    ]);
    expect(first).toMatchObject({ ok: true });
    expect(second).toMatchObject({ ok: true });
    expect(subject.stats.processes).toBe(2);
  });

  it('starts its processes with the flags the program needs', async () => {
    const subject = started({ execArgv: ['--no-node-snapshot'] });
    await expect(subject.run('echo', 'hi')).resolves.toEqual({
      ok: true,
      value: { greeting: 'hello', input: 'hi' },
    });
  });

  it('carries values the V8 serializer knows both ways (Map, Uint8Array, Date)', async () => {
    const subject = started();
    const input = { map: new Map([['a', 1]]), bytes: new Uint8Array([1, 2, 3]), when: new Date(0) };
    await expect(subject.run('echo', input)).resolves.toEqual({
      ok: true,
      value: { greeting: 'hello', input },
    });
  });

  it('kills its processes when closed', async () => {
    const subject = new ChildProcessLane({
      name: 'test',
      program: LANE_TEST_PROGRAM,
      programData: { greeting: 'hello' },
      processes: 1,
      heapMb: 128,
      callTimeoutMs: 5_000,
    });
    const outcome = await subject.run<number>('pid', null);
    const pid = (outcome as { value: number }).value;
    expect(alive(pid)).toBe(true);
    await subject.close();
    expect(alive(pid)).toBe(false);
  });
});
