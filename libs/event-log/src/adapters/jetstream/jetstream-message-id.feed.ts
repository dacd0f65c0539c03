import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
  type MsgRequest,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type {
  FeedSubscription,
  LogDescription,
  MessageIdBatch,
  MessageIdFeed,
} from '../../dedupe/message-id.feed';
import { EventLogUnavailableError } from '../../event-log.port';
import { TRACKING_STREAM } from './jetstream-event-log.adapter';

/** Every subject of `TRACKING`. */
const TRACKING_STREAM_SUBJECTS = 'tracking.>';
/** How long a batch waits for more ids once the client's queue is empty (ms). */
const GATHER_MS = 2;
/** Ids read before the batch is handed over, unless the log runs dry first. */
const MAX_BATCH = 2_000;

/**
 * Reads `TRACKING`'s message ids back with an ordered, headers-only consumer: the payloads stay on
 * the server, only `Nats-Msg-Id` and the sequence travel. Its own connection, so a catch-up of
 * millions of messages never queues behind (or in front of) the tracking API's publishes.
 */
export class JetStreamMessageIdFeed implements MessageIdFeed {
  private constructor(
    private readonly connection: NatsConnection,
    private readonly manager: JetStreamManager,
  ) {}

  static async connect(servers: string | string[], requestTimeoutMs = 5000): Promise<JetStreamMessageIdFeed> {
    try {
      const connection = await connect({
        servers: typeof servers === 'string' ? servers.split(',').map((url) => url.trim()) : servers,
        name: 'tributary-dedupe-feed',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: requestTimeoutMs,
        noAsyncTraces: true,
      });
      return new JetStreamMessageIdFeed(
        connection,
        await jetstreamManager(connection, { timeout: requestTimeoutMs }),
      );
    } catch (error) {
      throw new EventLogUnavailableError('the dedupe index cannot read the JetStream log', { cause: error });
    }
  }

  async describe(): Promise<LogDescription> {
    const info = await this.manager.streams.info(TRACKING_STREAM);
    return {
      logIdentity: info.created,
      firstSequence: info.state.messages > 0 ? info.state.first_seq : 0,
      lastSequence: info.state.last_seq,
    };
  }

  /**
   * A binary search over stored times (one direct get per step, about 30 for a billion messages):
   * sequences are stored in time order.
   */
  async firstSequenceSince(time: Date): Promise<number> {
    const { firstSequence, lastSequence } = await this.describe();
    if (firstSequence === 0) return lastSequence + 1;
    let low = firstSequence;
    let high = lastSequence + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const stored = await this.manager.streams.getMessage(TRACKING_STREAM, {
        seq: middle,
        next_by_subj: TRACKING_STREAM_SUBJECTS,
      } as unknown as MsgRequest);
      if (!stored) {
        high = middle;
      } else if (stored.time.getTime() >= time.getTime()) {
        high = Math.min(middle, stored.seq);
      } else {
        low = stored.seq + 1;
      }
    }
    return low;
  }

  async follow(
    fromSequence: number,
    onBatch: (batch: MessageIdBatch) => Promise<void>,
  ): Promise<FeedSubscription> {
    const consumer = await jetstream(this.connection).consumers.get(TRACKING_STREAM, {
      headers_only: true,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, fromSequence),
    });
    const messages = await consumer.consume({ max_messages: MAX_BATCH * 2 });
    let stopping = false;
    const reading = (async () => {
      let batch: MessageIdBatch = { messageIds: [], sequences: [], remaining: 0 };
      let batchStartedAt = 0;
      for await (const message of messages) {
        if (stopping) break;
        batch.messageIds.push(message.headers?.get('Nats-Msg-Id') ?? '');
        batch.sequences.push(message.seq);
        if (batch.messageIds.length === 1) batchStartedAt = performance.now();
        if (batch.messageIds.length < MAX_BATCH) {
          if (messages.getPending() > 0) continue;
          // The client's queue is empty: wait a moment for more, so a steady trickle of messages
          // still makes batches of some size (one worker round trip each), unless it is late already.
          if (performance.now() - batchStartedAt < GATHER_MS) {
            await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
            if (messages.getPending() > 0) continue;
          }
        }
        // The delivery info of the batch's last message only: parsing it costs a string split.
        batch.remaining = message.info.pending;
        const full = batch;
        batch = { messageIds: [], sequences: [], remaining: 0 };
        await onBatch(full);
      }
    })();
    const failed = reading.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(error instanceof Error ? error : new Error(String(error))),
    );
    failed.catch(() => undefined);
    return {
      failed,
      stop: async () => {
        stopping = true;
        await messages.close();
        await reading.catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}
