import { KeyedLock } from './keyed-lock';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedLock', () => {
  it('runs operations of one key one after another, in call order', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const operation = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([lock.run('k', operation('a')), lock.run('k', operation('b'))]);
    expect(results).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('lets other keys run at the same time', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const operation = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
    };
    await Promise.all([lock.run('x', operation('a')), lock.run('y', operation('b'))]);
    expect(log).toEqual(['a start', 'b start', 'a end', 'b end']);
  });

  it('passes a failure to its caller only, and the next operation still runs', async () => {
    const lock = new KeyedLock();
    const failed = lock.run('k', async () => {
      throw new Error('boom');
    });
    const next = lock.run('k', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });
});
