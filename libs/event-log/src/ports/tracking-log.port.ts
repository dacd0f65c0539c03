/**
 * The tracking log: where every accepted tracking message is stored durably, deduplicated on its
 * `messageId`, and from where the router's durable consumers and the live views read it.
 *
 * Guarantees every adapter gives (checked by `contracts/tracking-log.contract.ts`):
 * - `publishBatch` resolves only once every message is durably stored (or known to be a duplicate);
 *   a client that got a 200 can never lose its events.
 * - A `messageId` published again inside the dedupe window is not stored again: it is reported as a
 *   duplicate with the sequence of the copy already stored. Dedupe is global (docs/tracking-api.md §12.1).
 * - Each consumer is durable: it survives restarts, delivers at least once, in sequence order, and
 *   redelivers whatever was not acknowledged within its ack wait.
 */

/** One message to store. `workspaceId` and `sourceId` become the subject `tracking.<ws>.<source>`. */
export interface MessageToPublish {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  /** The normalized tracking message; stored as JSON. */
  payload: Record<string, unknown>;
}

export interface PublishOutcome {
  messageId: string;
  /** True when this `messageId` was already stored inside the dedupe window: nothing new was stored. */
  duplicate: boolean;
  /** Sequence of the stored message; for a duplicate, the sequence of the copy stored earlier. */
  sequence: number;
}

/** One delivery of one message to one consumer. Settle it exactly once with `ack`, `nak` or `term`. */
export interface Delivery {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  payload: Record<string, unknown>;
  /**
   * The bytes `payload` was parsed from: its JSON as the log stores it (UTF-8), exactly what
   * `JSON.stringify(payload)` gives, since that is how it was stored. A destination that sends the
   * message unchanged as JSON sends these instead of serializing it again.
   */
  readonly storedPayload: Uint8Array;
  sequence: number;
  publishedAt: Date;
  /** 1 on the first delivery, incremented on every redelivery (ack wait expired or nak). */
  deliveryCount: number;
  /**
   * The message is done for this consumer: it is never delivered to it again. Resolves once the log
   * has recorded it, unless the consumer was started with `confirmAcks: false`.
   */
  ack(): Promise<void>;
  /** Deliver again after `delayMs` (0: as soon as possible). Counts as outstanding until then. */
  nak(delayMs?: number): Promise<void>;
  /**
   * Give up on the message for this consumer (never redelivered). `reason` is for the operator: JetStream
   * 2.10.4+ puts it in its terminate advisory; nothing stores it otherwise, so dead-letter first when
   * the reason must be kept.
   */
  term(reason: string): Promise<void>;
}

export type DeliveryHandler = (delivery: Delivery) => void | Promise<void>;

export interface ConsumeOptions {
  /** Only messages of this source; absent: messages of every source. Fixed when the consumer is created. */
  sourceId?: string;
  /**
   * Where a NEW consumer starts: the first message published at or after this time (a replay; pass
   * `new Date(0)` for everything retained). Absent: only messages published after its creation.
   * Ignored when the consumer already exists: a durable consumer resumes where it stopped.
   */
  deliverFrom?: Date;
  /** A delivery not settled within this time is delivered again. */
  ackWaitMs: number;
  /**
   * Whether `ack()` waits for the log to confirm it (default true). False: acks are sent together
   * and `ack()` resolves at once; an ack lost to a crash leaves its message to be delivered again
   * after the ack wait, like a delivery in flight at the crash. For consumers whose handler may see a
   * message twice (at-least-once delivery); not for those that count exactly (a replay's tally).
   */
  confirmAcks?: boolean;
  /**
   * At most this many deliveries are outstanding (delivered or nak-delayed, not yet acked or termed);
   * the handler is called for up to this many messages at once, started in sequence order.
   */
  maxInFlight: number;
  /**
   * Called when the handler throws or rejects. The delivery is left unsettled, so it is delivered
   * again after `ackWaitMs`.
   */
  onHandlerError?: (error: unknown, delivery: Delivery) => void;
}

export interface ConsumerSubscription {
  /** Stops fetching; resolves once no handler call of this subscription is running. */
  stop(): Promise<void>;
}

export interface ConsumerLag {
  /** Messages matching the consumer's filter that it has not been given yet. */
  undelivered: number;
  /** Messages delivered (or nak-delayed) but not yet acked or termed. */
  unacknowledged: number;
}

/**
 * Where a tail of one source starts. Sequences are the log's own (global across sources), so a
 * reader that saw sequence N resumes with `afterSequence: N` and misses nothing still retained.
 */
export interface TailOptions {
  /** Only messages of this source. */
  sourceId: string;
  /**
   * Deliver the messages stored after this sequence (those of the source that are still retained);
   * a value past the end of the log means "from now". Absent: only messages stored after `tail` resolved.
   */
  afterSequence?: number;
}

/** One stored message, as a tail hands it out. */
export interface TailedMessage {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  sequence: number;
  publishedAt: Date;
  payload: Record<string, unknown>;
}

/**
 * Called once per message, in sequence order; the next message waits until the returned promise
 * settles, so a slow handler slows its own tail and nothing else (the reader decides when it is too slow).
 */
export type TailHandler = (message: TailedMessage) => void | Promise<void>;

/** Why a tail ended: `stop()` (or the log was closed), or a failure of the log or of the handler. */
export type TailEnd = { reason: 'stopped' } | { reason: 'failed'; error: unknown };

export interface TailSubscription {
  /** Stops reading; resolves once no handler call of this tail is running. */
  stop(): Promise<void>;
  /** Resolves once the tail has ended, with why; it never rejects. */
  readonly ended: Promise<TailEnd>;
}

export interface TrackingLog {
  /**
   * Stores the messages, all publishes in flight at once. Resolves, in input order, once EVERY message
   * is durably stored or known as a duplicate. Rejects with `EventLogUnavailableError` when the log
   * cannot be reached quickly; some messages may then be stored, which is safe since the client's retry
   * is deduplicated.
   */
  publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]>;
  /**
   * Creates the durable consumer `consumerName` if needed and delivers to `handler` until stopped.
   * Rejects with `ConsumerMismatchError` when the consumer exists with another `sourceId` filter.
   */
  consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription>;
  /**
   * Follows one source's messages as they are stored, without a durable consumer: nothing is kept
   * for it in the log, nothing is acknowledged, and it ends with `stop()` or the log's `close()`.
   * For live views (the console's debugger), not for delivery: a tail may miss nothing only while
   * it runs; a reader that reconnects passes the last sequence it saw as `afterSequence`.
   */
  tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription>;
  /** Deletes a consumer and its position; false when it did not exist. */
  deleteConsumer(consumerName: string): Promise<boolean>;
  /** Throws `ConsumerNotFoundError` for an unknown consumer. */
  consumerLag(consumerName: string): Promise<ConsumerLag>;
  /** True when the log answers; used by readiness checks. */
  ping(): Promise<boolean>;
  /** Stops every subscription and releases the connection or file. */
  close(): Promise<void>;
}

/** DI token of the tracking log: the process's log, behind the dedupe index where one runs. */
export const TRACKING_LOG = Symbol('TrackingLog');

export class ConsumerNotFoundError extends Error {
  constructor(readonly consumerName: string) {
    super(`event log consumer ${consumerName} does not exist`);
    this.name = 'ConsumerNotFoundError';
  }
}

/** A durable consumer's filter is fixed at creation; delete the consumer to change it. */
export class ConsumerMismatchError extends Error {
  constructor(
    readonly consumerName: string,
    readonly existingSourceId: string | undefined,
    readonly requestedSourceId: string | undefined,
  ) {
    super(
      `event log consumer ${consumerName} exists for source ${existingSourceId ?? '(all)'}, ` +
        `not ${requestedSourceId ?? '(all)'}; delete it first to change its filter`,
    );
    this.name = 'ConsumerMismatchError';
  }
}
