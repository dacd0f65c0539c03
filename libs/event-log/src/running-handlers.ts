import type { Delivery, DeliveryHandler } from './event-log.port';

/**
 * Runs handler calls without awaiting them one by one (a consumer has up to `maxInFlight` at once) and
 * remembers the running ones so that `stop()` can wait for them.
 */
export class RunningHandlers {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly handler: DeliveryHandler,
    private readonly onHandlerError: ((error: unknown, delivery: Delivery) => void) | undefined,
  ) {}

  start(delivery: Delivery): void {
    const call = (async () => {
      try {
        await this.handler(delivery);
      } catch (error) {
        // Left unsettled on purpose: the ack wait redelivers it, which avoids a hot retry loop.
        this.onHandlerError?.(error, delivery);
      }
    })();
    this.running.add(call);
    void call.finally(() => this.running.delete(call));
  }

  async whenIdle(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.allSettled([...this.running]);
    }
  }
}
