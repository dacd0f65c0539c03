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

/** The failed-attempt histories of messages, per consumer (the router's retry window). */
export interface AttemptHistory {
  /**
   * Adds a failed attempt to what the log remembers of message `sequence` for `consumerName`, durably,
   * and resolves to the whole history including it. An attempt with a `deliveryCount` settles the
   * unsettled attempt that delivery started, in its place; otherwise it is appended. A delivery fails
   * once: its failure written again (a write repeated after its answer was lost) changes nothing.
   * Safe with several writers (replicas): no attempt is lost. Kept at most as long as the retention.
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
}

/** DI token of the attempt history: the process's event log, which keeps it. */
export const ATTEMPT_HISTORY = Symbol('AttemptHistory');
