/**
 * What every `ExecutionLane` adapter keeps (`execution-lane.port.ts`), run over each adapter by
 * `execution-lane.contract-spec.ts`: calls answer with the program's data, failures are outcomes and
 * never rejections, a call that never yields or fills the heap ends only what ran it, and the lane
 * goes on with a replacement.
 */
import { join } from 'node:path';
import type { ExecutionLane } from './execution-lane.port';

export interface ContractLaneOptions {
  readonly program: string;
  readonly programData: unknown;
  readonly heapMb: number;
  readonly callTimeoutMs: number;
  readonly services: Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;
}

export interface ExecutionLaneFactory {
  /** One worker or process, so that calls share it. */
  open(options: ContractLaneOptions): ExecutionLane;
  /** A heap limit the adapter's program starts within but that `fillHeap` soon fills. */
  readonly smallHeapMb: number;
  /** What the adapter calls what runs the calls, as its failures name it: `worker`, `process`. */
  readonly runner: string;
}

export const LANE_TEST_PROGRAM = join(__dirname, 'testing', 'lane-test.program.ts');

export function describeExecutionLaneContract(name: string, factory: ExecutionLaneFactory): void {
  describe(`ExecutionLane contract: ${name}`, () => {
    jest.setTimeout(60_000);
    const lanes: ExecutionLane[] = [];
    const started = (options: Partial<ContractLaneOptions> = {}): ExecutionLane => {
      const lane = factory.open({
        program: LANE_TEST_PROGRAM,
        programData: { greeting: 'hello' },
        heapMb: 128,
        callTimeoutMs: 5_000,
        services: { double: async (text: string) => `${text}${text}` },
        ...options,
      });
      lanes.push(lane);
      return lane;
    };
    afterAll(async () => {
      await Promise.all(lanes.map((lane) => lane.close()));
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
    });

    it('answers a task that throws, or that does not exist, as failed, and goes on', async () => {
      const subject = started();
      await expect(subject.run('throw', 'no luck')).resolves.toEqual({
        ok: false,
        failure: 'failed',
        detail: 'no luck',
      });
      await expect(subject.run('nope', null)).resolves.toEqual({
        ok: false,
        failure: 'failed',
        detail: 'no task "nope"',
      });
      const before = await subject.run<number>('pid', null);
      await expect(subject.run('echo', 1)).resolves.toMatchObject({ ok: true });
      expect(await subject.run<number>('pid', null)).toEqual(before);
    });

    it('answers an input that cannot be cloned as failed, without sending it', async () => {
      const subject = started();
      await expect(subject.run('echo', { run: () => 1 })).resolves.toMatchObject({
        ok: false,
        failure: 'failed',
        detail: expect.stringContaining('input cannot be sent'),
      });
      await expect(subject.run('echo', 'next')).resolves.toMatchObject({ ok: true });
    });

    it('lets the program call the services of the process that started the lane', async () => {
      const subject = started();
      await expect(subject.run('askParent', 'ab')).resolves.toEqual({ ok: true, value: 'abab' });
      await expect(subject.run('askParent', 'x')).resolves.toEqual({ ok: true, value: 'xx' });
    });

    it('ends a call that never yields at the watchdog, answers the calls that shared it, and replaces it', async () => {
      const subject = started({ callTimeoutMs: 1_000 });
      await subject.run('echo', 'warm');
      const begun = Date.now();
      const [spinning, sharing] = await Promise.all([subject.run('spin', null), subject.run('wait', 60_000)]);
      const took = Date.now() - begun;
      expect(spinning).toEqual({
        ok: false,
        failure: 'overrun',
        detail: `no answer within 1000 ms; its ${factory.runner} was ended`,
      });
      expect(sharing).toMatchObject({
        ok: false,
        failure: 'ended',
        detail: expect.stringContaining('overran'),
      });
      expect(took).toBeLessThan(5_000);
      // This process's event loop kept turning meanwhile; the next call gets a new one.
      await expect(subject.run('echo', 'again')).resolves.toMatchObject({ ok: true });
    });

    it("keeps a call's own watchdog when it asks for one, and the lane's for the others", async () => {
      const subject = started({ callTimeoutMs: 30_000 });
      await subject.run('echo', 'warm');
      const begun = Date.now();
      await expect(subject.run('spin', null, { timeoutMs: 500 })).resolves.toEqual({
        ok: false,
        failure: 'overrun',
        detail: `no answer within 500 ms; its ${factory.runner} was ended`,
      });
      expect(Date.now() - begun).toBeLessThan(5_000);
      // A call asking for more than the lane's is given it: waiting past the lane's own budget is fine.
      await expect(subject.run('wait', 100, { timeoutMs: 60_000 })).resolves.toMatchObject({ ok: true });
    });

    it('ends what fills its heap, and this process heap does not grow with it', async () => {
      const subject = started({ heapMb: factory.smallHeapMb, callTimeoutMs: 30_000 });
      await subject.run('echo', 'warm');
      const heapBefore = process.memoryUsage().heapUsed;
      // Alone, the call that filled the heap overran it.
      await expect(subject.run('fillHeap', null)).resolves.toMatchObject({
        ok: false,
        failure: 'overrun',
        detail: expect.stringContaining(`${factory.smallHeapMb} MiB heap`),
      });
      // Beside another call, no one can tell which filled it: both ended.
      await subject.run('echo', 'warm');
      const together = await Promise.all([subject.run('fillHeap', null), subject.run('wait', 60_000)]);
      expect(together).toMatchObject([
        { ok: false, failure: 'ended', detail: expect.stringContaining(`${factory.smallHeapMb} MiB heap`) },
        { ok: false, failure: 'ended' },
      ]);
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * 1024 * 1024);
      await expect(subject.run('echo', 'after')).resolves.toMatchObject({ ok: true });
    });

    it('answers ended when what runs the calls dies, and replaces it', async () => {
      const subject = started();
      const first = await subject.run<number>('pid', null);
      const [crashed, sharing] = await Promise.all([subject.run('crash', null), subject.run('wait', 60_000)]);
      expect(crashed).toMatchObject({ ok: false, failure: 'ended' });
      expect(sharing).toMatchObject({ ok: false, failure: 'ended' });
      await expect(subject.run('echo', 'after')).resolves.toMatchObject({ ok: true });
      // A process is replaced by another process; a worker thread shares its process's id.
      if (factory.runner === 'process') expect(await subject.run<number>('pid', null)).not.toEqual(first);
    });

    it('answers closed once closed, including calls under way', async () => {
      const subject = started();
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
}
