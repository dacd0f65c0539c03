import type { DeliveryAttempt } from './attempt-history.port';

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
  /** Position in the dead-letter log; the paging cursor of `listDeadLetters`. */
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

/** The messages consumers gave up on, kept beside the tracking log for inspection and redrive. */
export interface DeadLetters {
  /**
   * Stores a message a consumer gave up on (stream `DEADLETTER`, kept as long as `retentionMs`).
   * Idempotent per consumer and message sequence: on JetStream within the dedupe window, on sqlite always.
   */
  deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome>;
  listDeadLetters(options?: ListDeadLettersOptions): Promise<DeadLetter[]>;
}

/** DI token of the dead letters: the process's event log, which keeps them. */
export const DEAD_LETTERS = Symbol('DeadLetters');
