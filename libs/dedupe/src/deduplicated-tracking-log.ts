import {
  assertValidMessages,
  EventLogUnavailableError,
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeliveryHandler,
  type MessageToPublish,
  type PublishOutcome,
  type TailHandler,
  type TailOptions,
  type TailSubscription,
  type TrackingLog,
} from '@tributary/event-log';
import type { DedupeIndex, DedupeIndexStats } from './dedupe-index.port';
import { IndexFollower, type DedupeStatus, type IndexFollowerOptions } from './index-follower';
import type { MessageIdFeed } from './message-id.feed';
import { messageIdKeys } from './message-id.key';
import type { DedupeWriteStep } from './write-steps.fault';

export type { DedupeStatus } from './index-follower';
export { DEDUPE_WRITE_STEPS, type DedupeFaultHook, type DedupeWriteStep } from './write-steps.fault';

export type DeduplicatedTrackingLogOptions = IndexFollowerOptions;

export interface DedupeStatusSource {
  dedupeStatus(): DedupeStatus;
  dedupeIndexStats(): Promise<DedupeIndexStats>;
}

export function hasDedupeIndex(log: unknown): log is DedupeStatusSource {
  return typeof (log as Partial<DedupeStatusSource> | null)?.dedupeStatus === 'function';
}

/**
 * The tracking log with the long-horizon dedupe index in front of it (NATS topology). Only the
 * append changes; the other parts of the log (dead letters, leases, ...) never pass through it.
 *
 * Write path of `publishBatch`: look the ids up in the index; append the rest to the log, each with
 * its `Nats-Msg-Id`; record the appended ids in the index from the log's acknowledgements; answer.
 * The index is written only after the append, so it never holds an id whose message the log lacks,
 * and a client's retry after any crash is stored, never refused. Between the append and the index
 * write, the log's short duplicate window (`guardWindowMs`) refuses the id instead; the same window
 * settles two replicas appending one id at once.
 *
 * The index follower (`index-follower.ts`) keeps the index up to date with what other writers
 * appended, and after a start or a crash. While it has not caught up, or when it lags by more than
 * half the guard window, publishes fail as unavailable (503 and a retry), since a lookup could then
 * miss an id the guard no longer covers.
 */
export class DeduplicatedTrackingLog implements TrackingLog, DedupeStatusSource {
  private readonly clock: () => number;
  private readonly follower: IndexFollower;
  private closed = false;

  private constructor(
    private readonly inner: TrackingLog,
    private readonly index: DedupeIndex,
    private readonly feed: MessageIdFeed,
    private readonly options: DeduplicatedTrackingLogOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.follower = new IndexFollower(index, feed, options);
  }

  /**
   * Starts the follower from the index's checkpoint and resolves at once; `dedupeStatus().ready`
   * turns true once it has caught up (`whenCaughtUp`).
   */
  static async start(
    inner: TrackingLog,
    index: DedupeIndex,
    feed: MessageIdFeed,
    options: DeduplicatedTrackingLogOptions,
  ): Promise<DeduplicatedTrackingLog> {
    const log = new DeduplicatedTrackingLog(inner, index, feed, options);
    await log.follower.start();
    return log;
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    assertValidMessages(messages);
    if (messages.length === 0) return [];
    this.assertServing();
    const messageIds = messages.map((message) => message.messageId);
    const keys = messageIdKeys(messageIds);
    const seen = await this.index.lookup(messageIds, this.clock(), keys);
    await this.fault('after-lookup');
    const outcomes = new Array<PublishOutcome>(messages.length);
    const fresh: MessageToPublish[] = [];
    const freshIndexes: number[] = [];
    for (let index = 0; index < messages.length; index += 1) {
      if (seen[index] > 0) {
        outcomes[index] = { messageId: messageIds[index], duplicate: true, sequence: seen[index] };
      } else {
        fresh.push(messages[index]);
        freshIndexes.push(index);
      }
    }
    if (fresh.length > 0) {
      const appending = this.inner.publishBatch(fresh);
      if (this.options.faults) {
        appending.catch(() => undefined);
        await this.fault('during-append');
      }
      const appended = await appending;
      await this.fault('after-append');
      let newest = 0;
      for (let position = 0; position < appended.length; position += 1) {
        outcomes[freshIndexes[position]] = appended[position];
        if (appended[position].sequence > newest) newest = appended[position].sequence;
      }
      this.follower.observe(newest);
      await this.follower.recordOwn(appended, freshIndexes, keys);
    }
    return outcomes;
  }

  dedupeStatus(): DedupeStatus {
    return this.follower.status();
  }

  dedupeIndexStats(): Promise<DedupeIndexStats> {
    return this.index.stats();
  }

  /** Resolves once the index has read the log up to where it stood when this log started. */
  whenCaughtUp(timeoutMs = 60_000): Promise<void> {
    return this.follower.whenCaughtUp(timeoutMs);
  }

  /** Resolves once every message the log held when called is indexed (tests, the bench). */
  whenIndexed(timeoutMs = 60_000): Promise<void> {
    return this.follower.whenIndexed(timeoutMs);
  }

  // Only appending is changed: reading the log goes to the wrapped log unchanged.

  consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    return this.inner.consume(consumerName, options, handler);
  }

  tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    return this.inner.tail(options, handler);
  }

  deleteConsumer(consumerName: string): Promise<boolean> {
    return this.inner.deleteConsumer(consumerName);
  }

  consumerLag(consumerName: string): Promise<ConsumerLag> {
    return this.inner.consumerLag(consumerName);
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.follower.close();
    await this.feed.close();
    await this.index.close();
    await this.inner.close();
  }

  private assertServing(): void {
    if (this.closed) throw new EventLogUnavailableError('the event log is closed');
    const status = this.follower.status();
    if (!status.ready) throw new EventLogUnavailableError(status.reason ?? 'the dedupe index is not ready');
  }

  private async fault(step: DedupeWriteStep): Promise<void> {
    if (this.options.faults) await this.options.faults(step);
  }
}
