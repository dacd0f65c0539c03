/**
 * Runs at most `limit` operations of a key at once within this process; the others wait, in the order
 * they came, for one to end, and a slot that frees passes straight to the next. A key's state goes
 * once nothing of it runs or waits, so keys that come and go (destinations) leave nothing behind.
 * User: the router's requests at once per destination (`DestinationDeliveries`).
 */
export class KeyedConcurrencyLimit {
  private readonly keys = new Map<string, KeyState>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }

  /** Starts `operation` now or once a slot of `key` frees; settles as it does. */
  run<T>(key: string, operation: () => Promise<T>): Promise<T> {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = { running: 0, waiting: [] }));
    const entry = state;
    const release = () => {
      const next = entry.waiting.shift();
      // The slot passes to the next one: as many run as before.
      if (next) next();
      else if (--entry.running === 0) this.keys.delete(key);
    };
    const start = (): Promise<T> => {
      let running: Promise<T>;
      try {
        running = operation();
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(release, release);
      return running;
    };
    if (entry.running < this.limit) {
      entry.running += 1;
      return start();
    }
    // Not an async function: the way without waiting makes no promise of its own.
    return new Promise<void>((resolve) => entry.waiting.push(resolve)).then(start);
  }

  /** What runs and waits under `key` now. */
  load(key: string): { running: number; waiting: number } {
    const state = this.keys.get(key);
    return { running: state?.running ?? 0, waiting: state?.waiting.length ?? 0 };
  }

  /** Keys with something running or waiting. */
  get keyCount(): number {
    return this.keys.size;
  }
}

interface KeyState {
  running: number;
  waiting: Array<() => void>;
}
