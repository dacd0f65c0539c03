import type { ConsumeOptions, Delivery, DeliveryHandler } from '../../event-log.port';
import { RunningHandlers } from '../../running-handlers';
import type { DeliverableRow } from './sqlite-event-log.schema';

/** What a runner needs from the log: claiming deliveries and settling them, both durable. */
export interface SqliteConsumerStore {
  /** Marks due redeliveries and new messages (up to the in-flight room) as delivered; oldest first. */
  claimDeliveries(consumerName: string, options: ConsumeOptions): Promise<DeliverableRow[]>;
  /** Earliest time a pending delivery becomes due again, or null when none is pending. */
  nextDueAt(consumerName: string): number | null;
  /** Pushes an outstanding delivery's redelivery one ack wait away: its handler is still working. */
  keepInProgress(consumerName: string, sequence: number, ackWaitMs: number): Promise<void>;
  settle(
    consumerName: string,
    sequence: number,
    settlement: { kind: 'done' } | { kind: 'retry'; delayMs: number },
  ): Promise<void>;
}

/**
 * Delivers one durable consumer inside this process. It claims work when woken (a commit happened, a
 * delivery was settled) or when a timer fires (the next ack-wait/nak deadline, or the poll interval
 * that catches messages written by another process on the same file).
 */
export class SqliteConsumerRunner {
  private readonly handlers: RunningHandlers;
  private stopped = false;
  private claiming = false;
  private wokenWhileClaiming = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly consumerName: string,
    private readonly options: ConsumeOptions,
    handler: DeliveryHandler,
    private readonly store: SqliteConsumerStore,
    private readonly pollIntervalMs: number,
    private readonly onStopped: () => void,
  ) {
    this.handlers = new RunningHandlers(handler, options.onHandlerError, options.ackWaitMs);
  }

  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.wokenWhileClaiming = true;
      return;
    }
    this.claiming = true;
    void this.claimAndDeliver();
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      clearTimeout(this.timer);
      this.onStopped();
    }
    await this.handlers.whenIdle();
  }

  private async claimAndDeliver(): Promise<void> {
    try {
      do {
        this.wokenWhileClaiming = false;
        const rows = await this.store.claimDeliveries(this.consumerName, this.options);
        // A row claimed after stop stays pending and is redelivered after the ack wait, as in JetStream.
        if (this.stopped) return;
        for (const row of rows) {
          this.handlers.start(this.toDelivery(row), () => {
            void this.store
              .keepInProgress(this.consumerName, row.sequence, this.options.ackWaitMs)
              .catch(() => undefined);
          });
        }
      } while (this.wokenWhileClaiming && !this.stopped);
    } catch {
      // The log is closing or the disk failed; the timer below tries again.
    } finally {
      this.claiming = false;
    }
    this.scheduleNextClaim();
  }

  private scheduleNextClaim(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const dueAt = this.store.nextDueAt(this.consumerName);
    const delay =
      dueAt === null ? this.pollIntervalMs : Math.min(Math.max(0, dueAt - Date.now()), this.pollIntervalMs);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private toDelivery(row: DeliverableRow): Delivery {
    const settle = async (settlement: { kind: 'done' } | { kind: 'retry'; delayMs: number }) => {
      await this.store.settle(this.consumerName, row.sequence, settlement);
      this.wake();
    };
    return {
      workspaceId: row.workspace_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      // Encoded only when a destination asks for it.
      get storedPayload() {
        return Buffer.from(row.payload, 'utf8');
      },
      sequence: row.sequence,
      publishedAt: new Date(row.published_at),
      deliveryCount: row.delivery_count,
      ack: () => settle({ kind: 'done' }),
      nak: (delayMs = 0) => settle({ kind: 'retry', delayMs: Math.max(0, delayMs) }),
      term: () => settle({ kind: 'done' }),
    };
  }
}
