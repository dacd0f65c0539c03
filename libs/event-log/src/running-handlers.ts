import type { Delivery, DeliveryHandler } from './event-log.port';

/** A handler still running after this many ack waits is no longer kept in progress: it is stuck. */
const MAX_IN_PROGRESS_ACK_WAITS = 20;

interface RunningCall {
  startedAt: number;
  signalledAt: number;
  signalInProgress?: () => void;
}

/**
 * Runs handler calls without awaiting them one by one (a consumer has up to `maxInFlight` at once) and
 * remembers the running ones so that `stop()` can wait for them.
 *
 * Given an ack wait, it also tells the log that a handler running for half of it is still working
 * (`signalInProgress`), so a slow delivery is not redelivered while it runs and the ack wait can stay
 * short: a crashed process's deliveries then come back within one ack wait. One timer per consumer
 * checks every running call, rather than one timer per message.
 */
export class RunningHandlers {
  private readonly running = new Map<Promise<void>, RunningCall>();
  private inProgressTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly handler: DeliveryHandler,
    private readonly onHandlerError: ((error: unknown, delivery: Delivery) => void) | undefined,
    private readonly ackWaitMs?: number,
  ) {}

  start(delivery: Delivery, signalInProgress?: () => void): void {
    // One promise per call (not an async wrapper and a `finally`): fewer promises per message.
    const failed = (error: unknown) => {
      try {
        // Left unsettled on purpose: the ack wait redelivers it, which avoids a hot retry loop.
        this.onHandlerError?.(error, delivery);
      } finally {
        this.finished(call);
      }
    };
    let handled: void | Promise<void>;
    try {
      handled = this.handler(delivery);
    } catch (error) {
      handled = Promise.reject(error);
    }
    const call: Promise<void> = Promise.resolve(handled).then(() => this.finished(call), failed);
    const now = Date.now();
    this.running.set(call, { startedAt: now, signalledAt: now, signalInProgress });
    if (signalInProgress && this.ackWaitMs !== undefined && !this.inProgressTimer) {
      this.inProgressTimer = setInterval(
        () => this.signalSlowCalls(),
        Math.max(50, Math.floor(this.ackWaitMs / 4)),
      );
      this.inProgressTimer.unref();
    }
  }

  async whenIdle(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.allSettled([...this.running.keys()]);
    }
  }

  private finished(call: Promise<void>): void {
    this.running.delete(call);
    if (this.running.size === 0 && this.inProgressTimer) {
      clearInterval(this.inProgressTimer);
      this.inProgressTimer = undefined;
    }
  }

  private signalSlowCalls(): void {
    const ackWaitMs = this.ackWaitMs ?? 0;
    const now = Date.now();
    for (const call of this.running.values()) {
      if (!call.signalInProgress || now - call.signalledAt < ackWaitMs / 2) continue;
      if (now - call.startedAt > MAX_IN_PROGRESS_ACK_WAITS * ackWaitMs) continue;
      call.signalledAt = now;
      try {
        call.signalInProgress();
      } catch {
        // The connection is down: the message is redelivered after the ack wait, as after a crash.
      }
    }
  }
}
