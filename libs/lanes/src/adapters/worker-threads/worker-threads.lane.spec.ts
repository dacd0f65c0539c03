import { join } from 'node:path';
import { WorkerThreadsLane, type WorkerThreadsLaneOptions } from './worker-threads.lane';

jest.setTimeout(60_000);

const program = join(__dirname, 'testing', 'lane-test.program.ts');

function lane(options: Partial<WorkerThreadsLaneOptions> = {}): WorkerThreadsLane {
  return new WorkerThreadsLane({
    name: 'test',
    program,
    programData: { greeting: 'hello' },
    workers: 1,
    heapMb: 64,
    callTimeoutMs: 5_000,
    services: { double: async (name: string) => `${name}${name}` },
    ...options,
  });
}

describe('WorkerThreadsLane', () => {
  const lanes: WorkerThreadsLane[] = [];
  const started = (options: Partial<WorkerThreadsLaneOptions> = {}) => {
    const made = lane(options);
    lanes.push(made);
    return made;
  };
  afterAll(async () => {
    await Promise.all(lanes.map((made) => made.close()));
  });

  it("runs a task of the program with the program's data, several calls at once", async () => {
    const subject = started();
    const outcomes = await Promise.all([
      subject.run('echo', { n: 1 }),
      subject.run('wait', 50),
      subject.run('echo', [2]),
    ]);
    expect(outcomes).toEqual([
      { ok: true, value: { greeting: 'hello', input: { n: 1 } } },
      { ok: true, value: 50 },
      { ok: true, value: { greeting: 'hello', input: [2] } },
    ]);
    expect(subject.stats.workers).toBe(1);
  });

  it('answers a task that throws, or that does not exist, as failed, and the worker goes on', async () => {
    const subject = started();
    await expect(subject.run('throw', 'no luck')).resolves.toEqual({
      ok: false,
      failure: 'failed',
      detail: 'no luck',
    });
    await expect(subject.run('nope', null)).resolves.toMatchObject({
      ok: false,
      failure: 'failed',
      detail: 'no task "nope"',
    });
    await expect(subject.run('echo', 1)).resolves.toMatchObject({ ok: true });
    expect(subject.stats.workersEnded).toBe(0);
  });

  it('answers an input that cannot be cloned as failed, without sending it', async () => {
    const subject = started();
    await expect(subject.run('echo', { run: () => 1 })).resolves.toMatchObject({
      ok: false,
      failure: 'failed',
      detail: expect.stringContaining('input cannot be sent'),
    });
  });

  it('lets the program call the services of the thread that started the lane', async () => {
    const subject = started();
    await expect(subject.run('askParent', 'ab')).resolves.toEqual({ ok: true, value: 'abab' });
    await expect(subject.run('askParent', 'x')).resolves.toEqual({ ok: true, value: 'xx' });
  });

  it('ends a call that never yields at the watchdog, answers the calls that shared its worker, and replaces the worker', async () => {
    const subject = started({ callTimeoutMs: 1_000 });
    const begun = Date.now();
    const [spinning, sharing] = await Promise.all([subject.run('spin', null), subject.run('wait', 60_000)]);
    const took = Date.now() - begun;
    expect(spinning).toEqual({
      ok: false,
      failure: 'overrun',
      detail: 'no answer within 1000 ms; its worker was ended',
    });
    expect(sharing).toMatchObject({
      ok: false,
      failure: 'ended',
      detail: expect.stringContaining('overran'),
    });
    expect(took).toBeLessThan(5_000);
    // This thread's event loop kept turning meanwhile; the next call gets a new worker.
    await expect(subject.run('echo', 'again')).resolves.toMatchObject({ ok: true });
    expect(subject.stats).toMatchObject({ overruns: 1, workersEnded: 1, workers: 1 });
  });

  it("ends a worker that fills its heap, and this thread's heap does not grow with it", async () => {
    const subject = started({ heapMb: 32, callTimeoutMs: 30_000 });
    const heapBefore = process.memoryUsage().heapUsed;
    // Alone on its worker, the call that filled the heap overran it.
    const outcome = await subject.run('fillHeap', null);
    expect(outcome).toMatchObject({
      ok: false,
      failure: 'overrun',
      detail: expect.stringContaining('32 MiB heap'),
    });
    // Beside another call, no one can tell which filled it: both ended.
    const together = await Promise.all([subject.run('fillHeap', null), subject.run('wait', 60_000)]);
    expect(together).toMatchObject([
      { ok: false, failure: 'ended', detail: expect.stringContaining('32 MiB heap') },
      { ok: false, failure: 'ended' },
    ]);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * 1024 * 1024);
    await expect(subject.run('echo', 'after')).resolves.toMatchObject({ ok: true });
  });

  it('answers closed once closed, including calls under way', async () => {
    const subject = lane();
    const underWay = subject.run('wait', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await subject.close();
    await expect(underWay).resolves.toMatchObject({ ok: false, failure: 'closed' });
    await expect(subject.run('echo', 1)).resolves.toMatchObject({ ok: false, failure: 'closed' });
  });

  it('answers failed when the program does not start', async () => {
    const subject = started({ program: join(__dirname, 'testing', 'missing.program.ts') });
    await expect(subject.run('echo', 1)).resolves.toMatchObject({
      ok: false,
      failure: 'failed',
      detail: expect.stringContaining('did not start'),
    });
  });
});
