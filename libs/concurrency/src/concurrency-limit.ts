/**
 * Runs at most `limit` operations at once; the rest wait their turn in call order. Only within one
 * process. User: a destination consumer that holds more messages than it sends at once (the messages
 * in its insert function's lane call beside those at the destination).
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    }
  }

  /** Operations started and not yet settled. */
  get active(): number {
    return this.running;
  }

  /** `operation`'s promise, started once a place is free; a place is freed whether it resolves or rejects. */
  run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) return this.start(operation);
    return new Promise<void>((turn) => this.waiting.push(turn)).then(() => this.start(operation));
  }

  private start<T>(operation: () => Promise<T>): Promise<T> {
    this.running += 1;
    let started: Promise<T>;
    try {
      started = operation();
    } catch (error) {
      started = Promise.reject(error as Error);
    }
    const release = () => {
      this.running -= 1;
      this.waiting.shift()?.();
    };
    started.then(release, release);
    return started;
  }
}
