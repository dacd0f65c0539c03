import { KeyedConcurrencyLimit } from './keyed-concurrency-limit';

/** An operation that runs until the test ends it. */
function controlled() {
  const started: string[] = [];
  const endings = new Map<string, { resolve(value: string): void; reject(error: Error): void }>();
  const operation = (name: string) => () =>
    new Promise<string>((resolve, reject) => {
      started.push(name);
      endings.set(name, { resolve, reject });
    });
  const end = (name: string) => endings.get(name)!.resolve(name);
  const fail = (name: string) => endings.get(name)!.reject(new Error(`${name} failed`));
  return { started, operation, end, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedConcurrencyLimit', () => {
  it('runs at most `limit` operations of a key at once, the rest in the order they came', async () => {
    const limit = new KeyedConcurrencyLimit(2);
    const { started, operation, end } = controlled();
    const results = ['a', 'b', 'c', 'd'].map((name) => limit.run('k', operation(name)));
    await settle();
    expect(started).toEqual(['a', 'b']);
    expect(limit.load('k')).toEqual({ running: 2, waiting: 2 });

    end('b');
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    end('a');
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(limit.load('k')).toEqual({ running: 2, waiting: 0 });
    end('c');
    end('d');
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd']);
  });

  it('counts each key apart', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const { started, operation, end } = controlled();
    const x = limit.run('x', operation('x1'));
    const y = limit.run('y', operation('y1'));
    void limit.run('x', operation('x2'));
    await settle();
    expect(started).toEqual(['x1', 'y1']);
    end('x1');
    end('y1');
    await Promise.all([x, y]);
    await settle();
    expect(started).toEqual(['x1', 'y1', 'x2']);
  });

  it('frees the slot of an operation that rejects or throws, and passes the failure on', async () => {
    const limit = new KeyedConcurrencyLimit(1);
    const { started, operation, fail, end } = controlled();
    const first = limit.run('k', operation('a'));
    const thrown = limit.run('k', () => {
      throw new Error('thrown before a promise');
    });
    const third = limit.run('k', operation('c'));
    fail('a');
    await expect(first).rejects.toThrow('a failed');
    await expect(thrown).rejects.toThrow('thrown before a promise');
    await settle();
    expect(started).toEqual(['a', 'c']);
    end('c');
    await expect(third).resolves.toBe('c');
  });

  it('forgets a key once nothing of it runs or waits', async () => {
    const limit = new KeyedConcurrencyLimit(3);
    const { operation, end } = controlled();
    const runs = ['a', 'b'].map((name) => limit.run(`destination-${name}`, operation(name)));
    expect(limit.keyCount).toBe(2);
    end('a');
    end('b');
    await Promise.all(runs);
    await settle();
    expect(limit.keyCount).toBe(0);
    expect(limit.load('destination-a')).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new KeyedConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => new KeyedConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
