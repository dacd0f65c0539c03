import {
  AckPolicy,
  DeliverPolicy,
  jetstreamManager,
  type JetStreamManager,
  type MsgRequest,
} from '@nats-io/jetstream';
import { createInbox, nanos, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { FeedSubscription, LogDescription, MessageIdBatch, MessageIdFeed } from '../../message-id.feed';
import {
  EventLogUnavailableError,
  TRACKING_STREAM,
  headerValue,
  rawFieldsOf,
  readReplyInfo,
  trackingFilter,
  type ReplyInfo,
} from '@tributary/event-log';

/** Every subject of `TRACKING`. */
const TRACKING_STREAM_SUBJECTS = trackingFilter(undefined);
/**
 * How long a batch waits for more ids after its first one (ms): each batch is one index commit and one
 * progress report to the thread that serves HTTP, so under a steady load fewer, larger batches cost
 * less, while the lag it adds stays far inside the guard window.
 */
const GATHER_MS = 10;
/** Ids read before the batch is handed over, unless the log runs dry first. */
const MAX_BATCH = 2_000;
/**
 * Ids read and not handed over yet beyond which the server's flow-control requests wait for an answer,
 * which pauses its deliveries: a catch-up of millions of messages never piles up in RAM.
 */
const MAX_BUFFERED_IDS = 4 * MAX_BATCH;
/** The consumer's idle heartbeat; two missed ones start a new consumer. */
const HEARTBEAT_MS = 5_000;
/** A consumer the follower stopped reading (a crash) is deleted by the server after this long. */
const INACTIVE_THRESHOLD_MS = 5 * 60_000;
/** Wait before creating the consumer again when the server could not be reached. */
const RETRY_MS = 500;

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
    if (info.state.messages === 0) return { logIdentity: info.created, firstSequence: 0, lastSequence: 0 };
    return {
      logIdentity: info.created,
      firstSequence: info.state.first_seq,
      lastSequence: await this.lastStoredSequence(info.state.first_seq, info.state.last_seq),
    };
  }

  /**
   * The newest message still stored, not the stream's last sequence: a regulation erases messages,
   * and erased ones at the tail would be a hole no follower can ever read past. Usually the last
   * sequence itself (one direct get); after an erased tail, a binary search for the last sequence
   * from which a stored message follows (nats-server's `last_by_subj` misses it after an erase).
   */
  private async lastStoredSequence(firstSequence: number, lastSequence: number): Promise<number> {
    const storedFrom = async (sequence: number) =>
      this.manager.streams.getMessage(TRACKING_STREAM, {
        seq: sequence,
        next_by_subj: TRACKING_STREAM_SUBJECTS,
      } as unknown as MsgRequest);
    const last = await storedFrom(lastSequence);
    if (last) return last.seq;
    let low = firstSequence;
    let high = lastSequence;
    let found = firstSequence;
    // Invariant: a message is stored at or after `found`; none at or after `high`.
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const stored = await storedFrom(middle);
      if (stored) {
        found = stored.seq;
        low = stored.seq + 1;
      } else {
        high = middle;
      }
    }
    return found;
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

  /**
   * An ordered push consumer of our own (ephemeral, headers only, no acks, flow control and idle
   * heartbeats), read through a plain subscription callback: the message's sequences and id are read
   * from its raw bytes (`parseIdMessage`), without the client's per-message JetStream objects, header
   * maps or async iteration. A gap in the consumer's delivery sequence (a message lost on the way, a
   * reconnect), missed heartbeats or a deleted consumer start a new consumer after the last sequence
   * read, as the client's ordered consumer does.
   */
  async follow(
    fromSequence: number,
    onBatch: (batch: MessageIdBatch) => Promise<void>,
  ): Promise<FeedSubscription> {
    const follower = new OrderedIdFollower(this.connection, this.manager, Math.max(1, fromSequence), onBatch);
    await follower.start();
    return { failed: follower.failed, stop: () => follower.stop() };
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** A message of the consumer, read from its raw bytes. */
export interface IdMessage {
  streamSequence: number;
  deliverySequence: number;
  /** Messages the stream held beyond this one for the consumer. */
  pending: number;
  /** `Nats-Msg-Id`; '' when the message has none. */
  messageId: string;
}

const MESSAGE_ID_HEADER = Buffer.from('\r\nNats-Msg-Id:');
/** Reused for every message: the feed needs only three of its facts. */
const REPLY_INFO: ReplyInfo = {
  deliveryCount: 0,
  streamSequence: 0,
  deliverySequence: 0,
  storedAtMs: 0,
  pending: 0,
};

/**
 * Reads a consumer message's sequences (from its reply subject) and its `Nats-Msg-Id` header from the
 * raw bytes the client received, into `into`. False for a message that is not a stored message (a
 * status: heartbeat, flow control, error), or when the client does not hold the raw bytes where
 * expected; then read it through the client's own accessors.
 */
export function parseIdMessage(message: Msg, into: IdMessage): boolean {
  const raw = rawFieldsOf(message);
  if (!raw || !readReplyInfo(raw.reply, REPLY_INFO)) return false;
  into.streamSequence = REPLY_INFO.streamSequence;
  into.deliverySequence = REPLY_INFO.deliverySequence;
  into.pending = REPLY_INFO.pending;
  into.messageId = '';
  if (raw.headerLength > 0 && raw.data)
    into.messageId = headerValue(raw.data, raw.headerLength, MESSAGE_ID_HEADER);
  return true;
}

/**
 * One `follow`: the consumer, its subscription, the batch being gathered and the batches waiting
 * for `onBatch`, which runs for one batch at a time.
 */
class OrderedIdFollower {
  readonly failed: Promise<never>;
  private fail!: (error: Error) => void;
  private subscription: Subscription | undefined;
  private consumerName: string | undefined;
  /** The next stream sequence to read: where a new consumer starts. */
  private nextSequence: number;
  private expectedDelivery = 1;
  private batch: MessageIdBatch = { messageIds: [], sequences: [], remaining: 0 };
  private readonly ready: MessageIdBatch[] = [];
  private buffered = 0;
  private gatherTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeard = Date.now();
  private handing = false;
  /** A flow-control request held back while too many ids wait (its reply subject). */
  private heldFlowControl: string | undefined;
  private restarting: Promise<void> | undefined;
  /** `stop` was called: no more messages are read, the ids read are still handed over. */
  private closing = false;
  /** Nothing more is handed over (stopped, or `onBatch` failed). */
  private stopped = false;
  private readonly parsed: IdMessage = { streamSequence: 0, deliverySequence: 0, pending: 0, messageId: '' };

  constructor(
    private readonly connection: NatsConnection,
    private readonly manager: JetStreamManager,
    fromSequence: number,
    private readonly onBatch: (batch: MessageIdBatch) => Promise<void>,
  ) {
    this.nextSequence = fromSequence;
    this.failed = new Promise<never>((_, reject) => (this.fail = reject));
    this.failed.catch(() => undefined);
  }

  async start(): Promise<void> {
    await this.subscribe();
    this.heartbeatTimer = setInterval(() => {
      if (!this.closing && Date.now() - this.lastHeard > 2 * HEARTBEAT_MS) this.restart();
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref?.();
  }

  /**
   * Stops reading, then hands over the ids already read (a graceful stop leaves the index as far as
   * the feed got, so a restart re-reads nothing it did not have to); resolves once `onBatch` is idle.
   */
  async stop(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeatTimer);
    await this.restarting?.catch(() => undefined);
    await this.unsubscribe();
    this.seal();
    while (this.handing || (this.ready.length > 0 && !this.stopped))
      await new Promise((resolve) => setTimeout(resolve, 1));
    this.stopped = true;
  }

  /** A new inbox and a consumer delivering to it from `nextSequence`. */
  private async subscribe(): Promise<void> {
    const inbox = createInbox();
    const subscription = this.connection.subscribe(inbox, {
      callback: (error, message) => {
        if (error || this.subscription !== subscription) return;
        this.receive(message);
      },
    });
    this.subscription = subscription;
    this.expectedDelivery = 1;
    this.lastHeard = Date.now();
    try {
      const info = await this.manager.consumers.add(TRACKING_STREAM, {
        deliver_subject: inbox,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: this.nextSequence,
        ack_policy: AckPolicy.None,
        headers_only: true,
        flow_control: true,
        idle_heartbeat: nanos(HEARTBEAT_MS),
        inactive_threshold: nanos(INACTIVE_THRESHOLD_MS),
        mem_storage: true,
        num_replicas: 1,
      });
      this.consumerName = info.name;
    } catch (error) {
      subscription.unsubscribe();
      if (this.subscription === subscription) this.subscription = undefined;
      throw error;
    }
  }

  private async unsubscribe(): Promise<void> {
    const { subscription, consumerName } = this;
    this.subscription = undefined;
    this.consumerName = undefined;
    subscription?.unsubscribe();
    if (consumerName)
      await this.manager.consumers.delete(TRACKING_STREAM, consumerName).catch(() => undefined);
  }

  /** Starts a new consumer after the last sequence read; retried until it works or the follower stops. */
  private restart(): void {
    if (this.restarting || this.closing) return;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.heldFlowControl = undefined;
    this.restarting = (async () => {
      await this.unsubscribe();
      while (!this.closing) {
        try {
          await this.subscribe();
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    })().finally(() => (this.restarting = undefined));
  }

  private receive(message: Msg): void {
    if (this.closing) return;
    this.lastHeard = Date.now();
    const parsed = this.parsed;
    if (!parseIdMessage(message, parsed)) {
      if (!this.readWithClient(message, parsed)) return;
    }
    if (parsed.deliverySequence !== this.expectedDelivery) {
      this.restart();
      return;
    }
    this.expectedDelivery += 1;
    this.nextSequence = parsed.streamSequence + 1;
    const batch = this.batch;
    batch.messageIds.push(parsed.messageId);
    batch.sequences.push(parsed.streamSequence);
    batch.remaining = parsed.pending;
    this.buffered += 1;
    if (batch.messageIds.length >= MAX_BATCH) this.seal();
    else this.gatherTimer ??= setTimeout(() => this.seal(), GATHER_MS);
  }

  /**
   * The slow path: a status message (flow control, heartbeat, error) or a client whose raw fields
   * moved. True when `message` is a stored message, read into `into`.
   */
  private readWithClient(message: Msg, into: IdMessage): boolean {
    const reply = message.reply ?? '';
    if (reply.startsWith('$JS.ACK.')) {
      const tokens = reply.split('.');
      const first = tokens.length === 9 ? 5 : 7;
      into.streamSequence = Number(tokens[first]);
      into.deliverySequence = Number(tokens[first + 1]);
      into.pending = Number(tokens[first + 3]);
      into.messageId = message.headers?.get('Nats-Msg-Id') ?? '';
      return true;
    }
    const headers = message.headers;
    if (headers?.code === 100 && reply !== '') {
      // Flow control: answered once the ids waiting are few enough (see MAX_BUFFERED_IDS).
      if (this.buffered >= MAX_BUFFERED_IDS) this.heldFlowControl = reply;
      else message.respond();
      return false;
    }
    if (headers?.code === 100) {
      // Idle heartbeat: it names the last delivery, so a lost message is noticed even when no other follows.
      const lastDelivered = Number(headers.get('Nats-Last-Consumer') || '0');
      if (lastDelivered >= this.expectedDelivery) this.restart();
      // A stalled consumer names the flow-control request it waits for: answered now, or once the
      // ids waiting are few enough, like the request itself.
      const stalled = headers.get('Nats-Consumer-Stalled');
      if (stalled && this.buffered >= MAX_BUFFERED_IDS) this.heldFlowControl = stalled;
      else if (stalled) this.connection.publish(stalled);
      return false;
    }
    // The consumer was deleted, or another error status: start a new one.
    this.restart();
    return false;
  }

  /** Closes the batch being gathered and hands it over when `onBatch` is free. */
  private seal(): void {
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    if (this.batch.messageIds.length === 0) return;
    this.ready.push(this.batch);
    this.batch = { messageIds: [], sequences: [], remaining: 0 };
    void this.handOver();
  }

  private async handOver(): Promise<void> {
    if (this.handing) return;
    this.handing = true;
    try {
      while (this.ready.length > 0 && !this.stopped) {
        const batch = this.ready.shift()!;
        await this.onBatch(batch);
        this.buffered -= batch.messageIds.length;
        if (this.heldFlowControl && !this.closing && this.buffered < MAX_BUFFERED_IDS) {
          this.connection.publish(this.heldFlowControl);
          this.heldFlowControl = undefined;
        }
      }
    } catch (error) {
      this.stopped = true;
      clearInterval(this.heartbeatTimer);
      void this.unsubscribe();
      this.fail(error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.handing = false;
    }
  }
}
