import type { RecordedEvent, SubscribeToAllOptions, Subscription } from '../../event-store.port';
import {
  isInsideHandlerOf,
  reportUnobservedSubscriptionError,
  runInHandlerScope,
  toError,
} from '../../subscription-handler-scope';

/** What a subscription needs from the store: ordered pages of the events table. */
export interface SqliteEventPages {
  /** Events with a position greater than `afterPosition`, in position order, at most `limit`. */
  readPage(afterPosition: bigint, limit: number): RecordedEvent[];
  /** Position of the newest stored event, `0n` when there is none. */
  headPosition(): bigint;
}

const PAGE_SIZE = 256;

/**
 * One subscriber to all events of a SQLite store.
 *
 * It never holds events in memory beyond one page: it always reads the table from the last position
 * it delivered. Catch-up and live are the same loop, so an append made while catching up is simply
 * read with a later page, never missed and never delivered twice. When a page comes back empty it
 * sleeps until an append through the same store wakes it, or the poll interval passes (to see appends
 * made by another process on the same file).
 */
export class SqliteAllSubscription implements Subscription {
  private stopRequested = false;
  private wakeUp: (() => void) | null = null;
  private lastDeliveredPosition: bigint;
  private readonly headWhenStarted: bigint;
  private caughtUpReported = false;
  private readonly finished: Promise<void>;

  constructor(
    private readonly pages: SqliteEventPages,
    private readonly handler: (event: RecordedEvent) => void | Promise<void>,
    private readonly options: SubscribeToAllOptions,
    private readonly pollIntervalMs: number,
    onFinished: (subscription: SqliteAllSubscription) => void,
  ) {
    this.lastDeliveredPosition = options.after ?? 0n;
    // Read now rather than in the loop: "caught up" refers to what was stored when subscribing.
    this.headWhenStarted = pages.headPosition();
    this.finished = this.deliverUntilStopped().finally(() => onFinished(this));
  }

  /** Called by the store after each committed append made through it. */
  notifyAppended(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    this.notifyAppended();
    // A handler stopping its own subscription must not wait for itself to return.
    if (isInsideHandlerOf(this)) return;
    await this.finished;
  }

  private async deliverUntilStopped(): Promise<void> {
    // Deliver nothing before subscribeToAll has returned, whatever is already stored.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      this.reportCaughtUpOnce();
      while (!this.stopRequested) {
        const page = this.pages.readPage(this.lastDeliveredPosition, PAGE_SIZE);
        if (page.length === 0) {
          await this.sleepUntilWokenOrPolled();
          continue;
        }
        for (const event of page) {
          if (this.stopRequested) return;
          await runInHandlerScope(this, () => this.handler(event));
          this.lastDeliveredPosition = event.position;
          this.reportCaughtUpOnce();
        }
      }
    } catch (error) {
      // A failed handler ends the subscription: delivering later events would leave a hole in
      // whatever the handler builds.
      this.stopRequested = true;
      const failure = toError(error);
      if (this.options.onError) this.options.onError(failure);
      else reportUnobservedSubscriptionError('SqliteEventStore', failure);
    }
  }

  private reportCaughtUpOnce(): void {
    if (this.caughtUpReported || this.lastDeliveredPosition < this.headWhenStarted) return;
    this.caughtUpReported = true;
    this.options.onCaughtUp?.();
  }

  private sleepUntilWokenOrPolled(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, this.pollIntervalMs);
      // A forgotten subscription must not keep the process alive on its own.
      timer.unref();
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
