/**
 * Runs operations that share a key one after another within this process; other keys run freely.
 * Only within one process: several processes need the store's own guard (an expected revision, a
 * database lock). User: the PostgreSQL adapter's DDL on a table (one statement at a time).
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(operation);
    // The next holder waits for this one to finish, whether it succeeded or failed.
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
