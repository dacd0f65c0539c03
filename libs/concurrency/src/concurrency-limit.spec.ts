import { ConcurrencyLimit } from './concurrency-limit';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConcurrencyLimit', () => {
  it('runs at most its limit at once, the rest in call order as places free', async () => {
    const limit = new ConcurrencyLimit(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const operation = (index: number) => async () => {
      started.push(index);
      running += 1;
      most = Math.max(most, running);
      await tick();
      await tick();
      running -= 1;
      return index * 10;
    };
    const results = await Promise.all([0, 1, 2, 3, 4].map((index) => limit.run(operation(index))));
    expect(results).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(limit.active).toBe(0);
  });

  it('frees the place of an operation that rejects or throws, and passes its error on', async () => {
    const limit = new ConcurrencyLimit(1);
    const rejected = limit.run(() => Promise.reject(new Error('refused')));
    const thrown = limit.run((): Promise<never> => {
      throw new Error('thrown before a promise');
    });
    const after = limit.run(async () => 'ran');
    await expect(rejected).rejects.toThrow('refused');
    await expect(thrown).rejects.toThrow('thrown before a promise');
    await expect(after).resolves.toBe('ran');
    expect(limit.active).toBe(0);
  });

  it('starts an operation at once while a place is free', () => {
    const limit = new ConcurrencyLimit(1);
    let ran = false;
    void limit.run(async () => {
      ran = true;
    });
    expect(ran).toBe(true);
    expect(limit.active).toBe(1);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => new ConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
