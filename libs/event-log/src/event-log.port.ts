import type { FunctionLogStore } from './function-logs.port';
import type { ProtocolsOutcomeStore } from './protocols-outcomes.port';

/**
 * The event log port: where every accepted tracking message is stored durably, deduplicated on its
 * `messageId`, and from where the router's durable consumers read it.
 *
 * Guarantees every adapter gives (checked by `event-log.contract.ts`):
 * - `publishBatch` resolves only once every message is durably stored (or known to be a duplicate);
 *   a client that got a 200 can never lose its events.
 * - A `messageId` published again inside the dedupe window is not stored again: it is reported as a
 *   duplicate with the sequence of the copy already stored. Dedupe is global (docs/tracking-api.md §12.1).
 * - Each consumer is durable: it survives restarts, delivers at least once, in sequence order, and
 *   redelivers whatever was not acknowledged within its ack wait.
 */

/** How long a `messageId` is remembered for dedupe when `DEDUPE_WINDOW` is not set (docs/tracking-api.md §12.1). */
export const DEFAULT_DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long messages are kept when `RETENTION` is not set; this bounds how far back a replay reaches. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The settings both adapters share. */
export interface EventLogSettings {
  /**
   * How long a `messageId` is remembered. Must not exceed `retentionMs`.
   *
   * Memory cost: JetStream keeps every id of the window in the server's RAM (an entry of id string,
   * sequence and timestamp plus its map slot: about 150 bytes for a 36-character UUID id). Budget
   * `messages per second x window in seconds x 150 B`: 100 msg/s for 24 h is ~1.3 GB, 1,000 msg/s is
   * ~13 GB. The sqlite adapter keeps the ids on disk (about 100 B each with the index), not in RAM.
   */
  dedupeWindowMs: number;
  /** How long a message is kept; older messages are deleted and can no longer be replayed. */
  retentionMs: number;
  /**
   * At most this many `markSeenOnce` keys are remembered at once (default
   * `DEFAULT_SEEN_ONCE_CAPACITY`); past it, `markSeenOnce` refuses with `SeenOnceCapacityError`.
   */
  seenOnceCapacity?: number;
}

/**
 * The longest a `markSeenOnce` key is remembered (the JetStream stream's `max_age`): a key may count
 * against the capacity until then, even when its own ttl is shorter.
 */
export const MAX_SEEN_ONCE_TTL_MS = 10 * 60 * 1000;
/**
 * Keys `markSeenOnce` remembers at once by default. Callers count each key against a rate limit
 * before storing it and keep it minutes, so this bound is far above honest use; each key costs
 * about 150 bytes on disk.
 */
export const DEFAULT_SEEN_ONCE_CAPACITY = 100_000;

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

export interface DeliveryAttempt {
  at: Date;
  /** What happened, for the operator: `HTTP 500`, `timeout after 5000 ms`, ... */
  outcome: string;
  /**
   * The log's delivery count of the delivery that made the attempt. A failure recorded with it
   * settles that delivery's started attempt (see `recordAttemptStarted`). Absent in histories kept
   * before it was recorded.
   */
  deliveryCount?: number;
  /**
   * True for an attempt recorded as started whose delivery never settled: the process making it
   * died or stalled past the ack wait before it recorded a failure, acked or nak-ed.
   */
  unsettled?: boolean;
}

/** The outcome an attempt shows while it is started and not settled, and for good when it never is. */
export const UNSETTLED_ATTEMPT_OUTCOME =
  'never settled: the process delivering it stopped or stalled before any outcome';

/** What `recordAttemptStarted` writes: the attempt about to be made by one delivery of a message. */
export interface StartedAttempt {
  at: Date;
  /** The delivery's `deliveryCount`. */
  deliveryCount: number;
}

/** The message a consumer gave up on, as it was delivered. */
export interface DeadLetteredMessage {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  /** Sequence of the message in the tracking log. */
  sequence: number;
  publishedAt: Date;
  payload: Record<string, unknown>;
}

export interface NewDeadLetter {
  /** The consumer (one per destination) that gave up. */
  consumerName: string;
  message: DeadLetteredMessage;
  reason: string;
  attempts: DeliveryAttempt[];
}

export interface DeadLetter extends NewDeadLetter {
  /** Position in the dead-letter log; use it with `readDeadLetter` and as a paging cursor. */
  deadLetterSequence: number;
  deadLetteredAt: Date;
}

export interface DeadLetterOutcome {
  deadLetterSequence: number;
  /** True when this consumer already dead-lettered this message sequence (a retried dead-letter). */
  duplicate: boolean;
}

export interface ListDeadLettersOptions {
  consumerName?: string;
  /** Only dead letters with a greater `deadLetterSequence` (paging cursor). */
  afterSequence?: number;
  /** At most this many, oldest first. Default 100. */
  limit?: number;
}

/**
 * A lease: one small compare-and-set record per name, kept beside the messages. The router uses one
 * per job that exactly one replica must run at a time (a replay, a destination's dead-letter
 * redrives): the holder writes it again and again while it works, carrying its progress, and
 * another replica takes it over only after seeing it unchanged for longer than the lease's time to
 * live. The log compares revisions only; it knows nothing of time, so replicas' clocks never matter.
 */
export interface LeaseRecord {
  /** Who holds the lease; `''` when it was released. */
  holder: string;
  /** The holder's progress (JSON), handed to whoever holds the lease next. */
  data: Record<string, unknown>;
  /** Changes on every write: the compare-and-set token. Always positive. */
  revision: number;
}

export interface LeaseValue {
  holder: string;
  data: Record<string, unknown>;
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

/**
 * What the log remembers of one message's failed attempts for one consumer, so the retry window and
 * the history survive restarts and hand-offs between router replicas. Written only when an attempt
 * fails, or when a redelivered message's attempt starts: a message delivered at the first attempt
 * leaves nothing behind. An attempt started and never settled (`unsettled`) counts as failed: it
 * never delivered.
 */
export interface FailedAttempts {
  /** The time of the first failed (or unsettled) attempt recorded (as its `at`). */
  firstFailedAt: Date;
  /** Every failed or unsettled attempt recorded, oldest first, from whichever process made it. */
  attempts: DeliveryAttempt[];
}

/**
 * The messages a privacy regulation erases (docs/regulations.md §4): those of one workspace (or of
 * some of its sources) whose `userId` (or `anonymousId`) is one of the subjects.
 */
export interface MessagesToErase {
  workspaceId: string;
  /** Only these sources' messages; absent: every source of the workspace. */
  sourceIds?: readonly string[];
  field: 'userId' | 'anonymousId';
  subjectIds: readonly string[];
}

/** What an erasure removed; a second erasure of the same subjects removes nothing more. */
export interface ErasedMessages {
  messages: number;
  /** The erased messages' ids, for what other stores keep by message id (recent delivery outcomes). */
  messageIds: string[];
  deadLetters: number;
  /** Protocols outcome records, whose samples are the messages as they came in. */
  protocolsOutcomes: number;
}

export interface EventLog extends ProtocolsOutcomeStore, FunctionLogStore {
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
  /**
   * Stores a message a consumer gave up on (stream `DEADLETTER`, kept as long as `retentionMs`).
   * Idempotent per consumer and message sequence: on JetStream within the dedupe window, on sqlite always.
   */
  deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome>;
  listDeadLetters(options?: ListDeadLettersOptions): Promise<DeadLetter[]>;
  /** Null when there is no dead letter at that sequence (or it is past retention). */
  readDeadLetter(deadLetterSequence: number): Promise<DeadLetter | null>;
  /**
   * The lease's last written value, or null when none was ever written. A lease not written for the
   * retention may be forgotten (JetStream's `max_age`): a job no replica touched for that long.
   */
  readLease(name: string): Promise<LeaseRecord | null>;
  /**
   * Writes the lease if its revision is still `expectedRevision` (0: only if it was never written),
   * durably, and resolves to its new revision; resolves to null, writing nothing, when another write
   * came first. Names are 1-128 characters of A-Z a-z 0-9 _ - (as consumer names).
   */
  writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null>;
  /**
   * Records `key` as seen for `ttlMs`, durably and for every process sharing this log (a restart or
   * another replica sees it too): resolves true when no live record of the key existed and this call
   * made one, false when one exists (nothing is changed). Of concurrent calls for one key, exactly
   * one resolves true. Used to refuse a replayed one-time value (an OAuth assertion's `jti`).
   *
   * Keys are 1-128 characters of A-Z a-z 0-9 _ - (pass a hash of what is remembered, so its size
   * never depends on a caller's input); `ttlMs` is 1..`MAX_SEEN_ONCE_TTL_MS`. Rejects with
   * `SeenOnceCapacityError` when `seenOnceCapacity` live keys are remembered already: refusing is
   * safe, forgetting a live key to make room would not be.
   */
  markSeenOnce(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Adds a failed attempt to what the log remembers of message `sequence` for `consumerName`, durably,
   * and resolves to the whole history including it. An attempt with a `deliveryCount` settles the
   * unsettled attempt that delivery started, in its place; otherwise it is appended. Safe with several
   * writers (replicas): no attempt is lost. Kept at most as long as the retention.
   */
  recordFailedAttempt(
    consumerName: string,
    sequence: number,
    attempt: DeliveryAttempt,
  ): Promise<FailedAttempts>;
  /**
   * Records, durably and before the destination is called, that delivery `deliveryCount` of message
   * `sequence` is making an attempt for `consumerName`: an attempt that stays `unsettled` until a
   * failure of the same delivery count is recorded over it (or the message is settled and its
   * history forgotten). Resolves to the whole history including it. Deliveries that keep dying or
   * stalling there (a poison message) are counted by these, wherever each was made. A second start
   * of the same delivery count is recorded once.
   */
  recordAttemptStarted(
    consumerName: string,
    sequence: number,
    started: StartedAttempt,
  ): Promise<FailedAttempts>;
  /** What `recordFailedAttempt` stored for this message and consumer, or null when nothing. */
  readFailedAttempts(consumerName: string, sequence: number): Promise<FailedAttempts | null>;
  /** Drops it once the message is settled; nothing happens when there is none. `deleteConsumer` drops all of it. */
  forgetFailedAttempts(consumerName: string, sequence: number): Promise<void>;
  /**
   * Erases the subjects' messages from the log (on JetStream erased, not only marked deleted), their
   * dead letters, the failed-attempt histories of the erased messages and their Protocols outcome
   * records. Idempotent: after a crash midway, running it again finishes the work. The dedupe index
   * keeps the erased messages' ids (hashed on JetStream), which hold nothing of the users.
   */
  eraseMessages(request: MessagesToErase): Promise<ErasedMessages>;
  /** True when the log answers; used by readiness checks. */
  ping(): Promise<boolean>;
  /** Stops every subscription and releases the connection or file. */
  close(): Promise<void>;
}

export const EVENT_LOG = Symbol('EventLog');

/** The log cannot be reached (or is closed): the HTTP layer answers 503 with `Retry-After`. */
export class EventLogUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventLogUnavailableError';
  }
}

/** `markSeenOnce` holds `seenOnceCapacity` live keys: try again once some have expired. */
export class SeenOnceCapacityError extends EventLogUnavailableError {
  constructor(capacity: number) {
    super(`the event log already remembers ${capacity} seen-once keys (its capacity); retry later`);
    this.name = 'SeenOnceCapacityError';
  }
}

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
