/** Thrown by `ConcurrencyLimiter.run` when every slot is busy and the waiting line is full. */
export class ConcurrencyLimitError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many operations of this kind at once; retry later');
    this.name = 'ConcurrencyLimitError';
  }
}

/**
 * A semaphore for costly work (password hashing; a destination consumer's requests at once): at most
 * `maxRunning` tasks run at once, at most `maxWaiting` more wait for a slot in arrival order, and
 * anything beyond is refused at once, so a flood costs memory and CPU bounded by these two numbers,
 * not by the flood.
 */
export class ConcurrencyLimiter {
  private running = 0;
  private readonly waiting: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  private closedWith: Error | undefined;

  constructor(
    private readonly maxRunning: number,
    private readonly maxWaiting: number,
    /** What a refused caller is told to wait. */
    private readonly retryAfterSeconds = 1,
  ) {
    if (!Number.isInteger(maxRunning) || maxRunning < 1) throw new RangeError('maxRunning must be >= 1');
    if (!Number.isInteger(maxWaiting) || maxWaiting < 0) throw new RangeError('maxWaiting must be >= 0');
  }

  /** Tasks running now, and waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.closedWith) throw this.closedWith;
    if (this.running >= this.maxRunning) {
      if (this.waiting.length >= this.maxWaiting) throw new ConcurrencyLimitError(this.retryAfterSeconds);
      // The slot is handed over by the task that finishes, so `running` never dips in between.
      await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next.resolve();
      else this.running -= 1;
    }
  }

  /**
   * Nothing more starts: the tasks waiting for a slot, and any run asked for later, reject with `error`
   * without running. Those running go on to their end.
   */
  close(error: Error): void {
    this.closedWith = error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}
