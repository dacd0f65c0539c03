/**
 * What one attempt to send a message to a destination came to, as a delivery adapter or a function
 * reports it (libs/destinations' delivery port). Here rather than beside the port because the
 * settlement decider (libs/routing), which turns it into the message's outcome, may not import
 * libs/destinations. Its words are the attempt's; `DeliveryOutcome` holds what became of the message.
 */

/**
 * Why a value of a delivered message was not stored as sent: it did not fit its column's type (the row
 * holds null there), or its column would pass the destination's column limit (the column is not created).
 */
export type ValueNotStoredCause = 'type_conflict' | 'column_limit';

export interface ValueNotStored {
  readonly cause: ValueNotStoredCause;
  readonly table: string;
  readonly column: string;
  /** For the operator: `column "amount" holds numbers, but the message has string "lots"`. */
  readonly reason: string;
}

export interface DeliveredAttempt {
  readonly outcome: 'delivered';
  /** Values the destination left out of what it stored; the router counts them in the metrics. */
  readonly valuesNotStored?: readonly ValueNotStored[];
}

/** Discards the router counts by cause, besides their reason: a guard of the destination refused them. */
export type DiscardCause = 'system_schema' | 'foreign_table' | 'table_limit' | 'egress_denied';

/** Refused for good (a 4xx other than 408 and 429, a value the destination can never store, a misconfiguration). */
export interface DiscardAttempt {
  readonly outcome: 'discard';
  /** For the operator: `HTTP 404: <body excerpt>`, `column "plan" is boolean, got "gold"`, ... */
  readonly reason: string;
  /** The vendor's HTTP status, when there was one. */
  readonly status?: number;
  readonly cause?: DiscardCause;
}

/** Failed in a way that may pass later (408, 429, 5xx, a timeout, a refused connection). */
export interface RetryAttempt {
  readonly outcome: 'retry';
  readonly reason: string;
  readonly status?: number;
  /**
   * The vendor's `Retry-After` (on 429 and 503), in milliseconds from now, as asked: the settlement
   * decider honours it up to its longest delay.
   */
  readonly retryAfterMs?: number;
}

/**
 * The destination's own subscriptions do not take the message (Segment Actions: no `subscribe` matches
 * it), its function has no handler for it, or its insert function dropped it: nothing was sent, and
 * nothing should be; the router counts it as filtered.
 */
export interface FilteredAttempt {
  readonly outcome: 'filtered';
  readonly reason: string;
}

export type AttemptResult = DeliveredAttempt | DiscardAttempt | RetryAttempt | FilteredAttempt;
