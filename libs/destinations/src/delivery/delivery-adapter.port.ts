/**
 * The delivery port: how the router hands messages to a destination and learns, per message, what became
 * of them (docs/tracking-api.md §12.2). One adapter per catalog entry that Tributary delivers to.
 *
 * Contract every adapter keeps:
 * - `deliver` never rejects: every failure becomes an outcome, so one bad message or one unreachable
 *   vendor cannot crash the router's consumer.
 * - It resolves with exactly one result per message, in the order of `request.messages`, each carrying
 *   the message's `messageId`.
 * - `retry` means "nothing final happened, try again later" (408, 429, 5xx, timeouts, connection errors);
 *   `discard` means "the destination refused it for good" (any other 4xx, a value it cannot store, a
 *   misconfigured destination); `delivered` means the vendor accepted it (any 2xx).
 * - Delivering a message again is safe as far as the adapter can make it so (the warehouse keys rows
 *   on `messageId`); the router delivers at least once.
 */
import type {
  AttemptResult,
  DeliveredAttempt,
  DiscardAttempt,
  DiscardCause,
  FilteredAttempt,
  NormalizedMessage,
  RetryAttempt,
  ValueNotStored,
} from '@tributary/contracts';

// What an attempt came to is declared in libs/contracts, where the settlement decider reads it too.
export type {
  AttemptResult,
  DeliveredAttempt,
  DiscardAttempt,
  DiscardCause,
  FilteredAttempt,
  RetryAttempt,
  ValueNotStored,
  ValueNotStoredCause,
} from '@tributary/contracts';

/** The attempt's result for one message of a request. */
export type DeliveryResult = AttemptResult & { readonly messageId: string };

export interface DeliveryRequest {
  /**
   * The destination's settings as plain values, keyed by catalog setting key, with `password` settings
   * already decrypted. Never logged or echoed in a reason by the adapters.
   */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The source the messages came from; the warehouse stores it on each row (`source_id`). */
  readonly sourceId?: string;
  /** The source's slug; the warehouse names the source's default schema after it. */
  readonly sourceSlug?: string;
  /** Normalized messages as stored in the event log; results come back in this order. */
  readonly messages: readonly NormalizedMessage[];
  /**
   * `storedPayload[i]`, where present, is the JSON `messages[i]` is stored as in the log (UTF-8): given only
   * for a message handed over exactly as stored, not for a replay's or a filter's copy. An adapter that
   * sends a message as JSON may send these bytes rather than serialize it again: they are the same JSON.
   */
  readonly storedPayload?: readonly (Uint8Array | undefined)[];
}

/**
 * A privacy regulation's deletion of users, forwarded to one destination (docs/regulations.md §4):
 * the destination erases what it holds of each user, as far as it can.
 */
export interface UserDeletionRequest {
  /** As in `DeliveryRequest`: plain values, `password` settings decrypted. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The destination's source: a warehouse deletes only this source's rows. */
  readonly sourceId: string;
  readonly sourceSlug: string;
  /** Each user with the id of its delete request, the same on every retry of the regulation. */
  readonly users: readonly { readonly userId: string; readonly messageId: string }[];
  /** When the regulation asked, RFC 3339 UTC. */
  readonly timestamp: string;
}

export type UserDeletionOutcome =
  /** Every user's deletion was accepted. */
  | { readonly outcome: 'deleted' }
  /** The destination has no deletion (an Actions destination without `onDelete`). */
  | { readonly outcome: 'not_supported'; readonly reason: string }
  /** Worth trying again later (timeouts, 5xx, 429, connection errors). */
  | { readonly outcome: 'retry'; readonly reason: string }
  /** Refused for good (a 4xx, a misconfigured destination). */
  | { readonly outcome: 'failed'; readonly reason: string };

export interface DeliveryAdapter {
  /** The catalog slug this adapter delivers to (`webhooks`, `postgres`, `actions-amplitude`). */
  readonly slug: string;
  /**
   * One result per message, in order; never rejects (see the contract above). How many messages a
   * call carries is the destination definition's `gathering`; without it, one.
   */
  deliver(request: DeliveryRequest): Promise<DeliveryResult[]>;
  /** Forwards a regulation's deletion; absent: the destination cannot delete. Never rejects. */
  deleteUsers?(request: UserDeletionRequest): Promise<UserDeletionOutcome>;
  /**
   * Why the destination on `sourceId` is not being run (its lane suspended it after repeated
   * overruns), or `undefined`; absent: the adapter never suspends a destination.
   */
  suspensionOf?(sourceId: string): DestinationSuspension | undefined;
  /** Releases what the adapter holds (database pools); later `deliver` calls may reopen them. */
  close(): Promise<void>;
}

/** Finds the adapter of a catalog destination. */
export interface DeliveryAdapterRegistry {
  /** The adapter for a catalog slug; `undefined` when Tributary cannot deliver to that destination. */
  deliveryAdapterFor(slug: string): DeliveryAdapter | undefined;
  /** Closes every adapter created so far. */
  close(): Promise<void>;
  /**
   * Why the destination of `slug` on `sourceId` is not being run (its lane suspended it after repeated
   * overruns), or `undefined`.
   */
  suspensionOf?(sourceId: string, slug: string): DestinationSuspension | undefined;
}

/** A destination its lane stopped running: its deliveries are retried without running. */
export interface DestinationSuspension {
  readonly status: 'suspended';
  readonly reason: string;
  /** ISO time. */
  readonly since: string;
}

export const delivered = (valuesNotStored: readonly ValueNotStored[] = []): DeliveredAttempt =>
  valuesNotStored.length === 0 ? { outcome: 'delivered' } : { outcome: 'delivered', valuesNotStored };

export const discard = (reason: string, status?: number, cause?: DiscardCause): DiscardAttempt => ({
  outcome: 'discard',
  reason,
  ...(status !== undefined ? { status } : {}),
  ...(cause !== undefined ? { cause } : {}),
});

/**
 * The reason of every delivery the egress policy refused, first in the reason so that operators and
 * metrics can pick these out: `egress_denied: 10.0.0.5 is in private 10.0.0.0/8, ...`.
 */
export const EGRESS_DENIED_REASON = 'egress_denied';

/** A target the egress policy refuses: final, since retrying cannot change the policy's answer. */
export const egressDenied = (detail: string): DiscardAttempt =>
  discard(`${EGRESS_DENIED_REASON}: ${detail}`, undefined, 'egress_denied');

export const filtered = (reason: string): FilteredAttempt => ({ outcome: 'filtered', reason });

export function retry(
  reason: string,
  details: { status?: number; retryAfterMs?: number } = {},
): RetryAttempt {
  return {
    outcome: 'retry',
    reason,
    ...(details.status !== undefined ? { status: details.status } : {}),
    ...(details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {}),
  };
}

/** The same outcome for every message of a request (a misconfigured destination, an unreachable vendor). */
export function sameOutcomeForAll(
  messages: readonly NormalizedMessage[],
  outcome: AttemptResult,
): DeliveryResult[] {
  return messages.map((message) => ({ messageId: message.messageId, ...outcome }));
}

/** The deletion outcome a delivery outcome of the same request means. */
export function deletionOutcomeOf(outcome: AttemptResult): UserDeletionOutcome {
  switch (outcome.outcome) {
    case 'delivered':
    case 'filtered':
      return { outcome: 'deleted' };
    case 'retry':
      return { outcome: 'retry', reason: outcome.reason };
    case 'discard':
      return { outcome: 'failed', reason: outcome.reason };
  }
}
