import { ConcurrencyLimiter, ConcurrencyLimitError } from './concurrency-limiter';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('ConcurrencyLimiter', () => {
  it('runs at most maxRunning tasks at once, queues maxWaiting more in order, refuses the rest', async () => {
    const limiter = new ConcurrencyLimiter(2, 1, 3);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, index) =>
      limiter.run(async () => {
        started.push(index);
        await gate.promise;
        return index;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(limiter.load).toEqual({ running: 2, waiting: 1 });
    const refused = limiter.run(async () => 'never');
    await expect(refused).rejects.toThrow(ConcurrencyLimitError);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: 3 });

    gates[1].resolve();
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    expect(limiter.load).toEqual({ running: 2, waiting: 0 });
    gates[0].resolve();
    gates[2].resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot of a task that fails', async () => {
    const limiter = new ConcurrencyLimiter(1, 0);
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(async () => 'next')).resolves.toBe('next');
  });

  it('once closed, starts nothing more: waiting tasks and later runs reject, running ones finish', async () => {
    const limiter = new ConcurrencyLimiter(1, 5);
    const gate = deferred();
    const started: string[] = [];
    const running = limiter.run(async () => {
      started.push('running');
      await gate.promise;
      return 'finished';
    });
    const waiting = limiter.run(async () => {
      started.push('waiting');
      return 'never';
    });
    await Promise.resolve();
    limiter.close(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    await expect(limiter.run(async () => 'later')).rejects.toThrow('stopped');
    gate.resolve();
    await expect(running).resolves.toBe('finished');
    expect(started).toEqual(['running']);
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses nonsense bounds', () => {
    expect(() => new ConcurrencyLimiter(0, 1)).toThrow(RangeError);
    expect(() => new ConcurrencyLimiter(1, -1)).toThrow(RangeError);
  });
});
