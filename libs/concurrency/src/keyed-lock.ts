/**
 * Runs operations that share a key one after another within this process; other keys run freely.
 *
 * Expected revisions guard one stream. An invariant that spans streams, such as "a source is
 * connected to at most one tracking plan" (one stream per plan), is checked against the read model
 * instead, and two requests could both pass that check before either had written. Holding the key
 * from the check until the write is in the read model closes that gap for the one Config API process.
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
