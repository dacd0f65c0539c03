/**
 * What became of one message for one destination, and what the router does with it in the log,
 * decided from routing's decision, the poison rule's check, the attempt's result and facts the event
 * log keeps (the delivery count, the time the message was stored, the time of its first failed
 * attempt), so that every replica, and the same replica after a restart, decides alike. Every
 * outcome is decided here, in the words of `DeliveryOutcome`; the router only applies the verdict.
 */
import type { AttemptResult, DeadLetterCause, DeliveryOutcome, DiscardCause } from '@tributary/contracts';
import type { RoutingDecision } from '../delivery/delivery.decider';
import type { PoisonCheck } from './poison.decider';

/** The first retry waits about this long; each further one doubles it, up to the cap. */
export const BASE_RETRY_DELAY_MS = 1_000;
/** The longest wait before a retry, a destination's `Retry-After` included (it is clamped here, and only here). */
export const MAX_RETRY_DELAY_MS = 10 * 60_000;

export interface SettlementFacts {
  /** Whether the message was to be sent at all. */
  routing: RoutingDecision;
  /** For a redelivery routing sent on: the poison rule's check, made before any attempt. */
  poison?: PoisonCheck;
  /** What the attempt came to; absent when nothing was sent (routing or the poison rule stopped it). */
  attempt?: AttemptResult;
  /** The log's delivery count of this message for this consumer: 1 on the first delivery. */
  deliveryCount: number;
  /** When the log stored the message. */
  storedAt: Date;
  /**
   * When the first failed attempt of this message for this consumer was made, as the log remembers
   * it; for a failed attempt, the log has recorded it before deciding, so this is never later than now.
   */
  firstFailedAt: Date | null;
  /** The attempts the log keeps for the message after recording a failed one: the dead letter's count. */
  attemptsKept: number;
  now: Date;
  /** How long a failing message is retried, counted from its first failed attempt. */
  retryWindowMs: number;
  /** A number in [0, 1) that spreads retries (jitter); the caller draws it, so this stays pure. */
  jitter: number;
}

/** What the router does with the message in the log: the log's own verbs. */
export type LogAction =
  /** Final: the message is not delivered to this destination again. */
  | { readonly kind: 'ack' }
  /** Delivered again after the delay. */
  | { readonly kind: 'nak'; readonly delayMs: number }
  /** Kept among the destination's dead letters with this reason, then acknowledged. */
  | { readonly kind: 'deadLetter'; readonly reason: string };

export interface Settlement {
  readonly outcome: DeliveryOutcome;
  readonly log: LogAction;
  /** For the metrics and the debugger: the destination's answer, or why the message was given up on. */
  readonly reason?: string;
  /** Of a discard: the destination guard that refused it, when one did. */
  readonly discardCause?: DiscardCause;
  /** Of a dead letter: why. */
  readonly deadLetterCause?: DeadLetterCause;
  /**
   * The log drops the attempts it keeps for the message: it is settled, and some may have been
   * written (it was delivered before, or this delivery's failure was recorded). A first delivery
   * settled at once writes nothing more; a retried message keeps its history for the next decision.
   */
  readonly forgetsHistory: boolean;
}

export function decideSettlement(facts: SettlementFacts): Settlement {
  const { routing, poison, attempt } = facts;
  if (routing.outcome === 'skip') return settled(facts, 'skipped');
  if (routing.outcome === 'filter') return settled(facts, 'filtered');
  if (poison?.action === 'dead-letter') {
    return {
      outcome: 'dead_lettered',
      log: { kind: 'deadLetter', reason: poison.reason },
      reason: poison.reason,
      deadLetterCause: 'poison',
      forgetsHistory: true,
    };
  }
  if (attempt === undefined)
    throw new Error('decideSettlement: routing sent the message, but no attempt is given');
  switch (attempt.outcome) {
    case 'delivered':
      return settled(facts, 'delivered');
    case 'filtered':
      // The destination's own subscriptions matched none of its actions, its function has no handler
      // for the message's type, or its insert function dropped it.
      return settled(facts, 'filtered', { reason: attempt.reason });
    case 'discard':
      return settled(facts, 'discarded', {
        reason: attempt.reason,
        ...(attempt.cause !== undefined ? { discardCause: attempt.cause } : {}),
      });
    case 'retry':
      return afterFailure(facts, attempt.reason, attempt.retryAfterMs);
  }
}

/** A final outcome: the message is acknowledged. */
function settled(
  facts: SettlementFacts,
  outcome: DeliveryOutcome,
  detail: Pick<Settlement, 'reason' | 'discardCause'> = {},
): Settlement {
  return {
    outcome,
    log: { kind: 'ack' },
    ...detail,
    forgetsHistory: facts.deliveryCount > 1,
  };
}

/** A failed attempt, recorded in the log before deciding: retried within the window, dead-lettered after it. */
function afterFailure(facts: SettlementFacts, reason: string, retryAfterMs: number | undefined): Settlement {
  const now = validTime(facts.now, 'now');
  // A replica with a clock behind the one that stored the message must not date the failure before it.
  const firstFailedAt = Math.max(
    validTime(facts.firstFailedAt ?? facts.now, 'firstFailedAt'),
    validTime(facts.storedAt, 'storedAt'),
  );
  const windowEndsAt = firstFailedAt + facts.retryWindowMs;
  if (now >= windowEndsAt) {
    return {
      outcome: 'dead_lettered',
      log: {
        kind: 'deadLetter',
        reason: `retries exhausted after ${facts.attemptsKept} attempts: ${reason}`,
      },
      reason,
      deadLetterCause: 'retries_exhausted',
      forgetsHistory: true,
    };
  }
  // The last retry is made when the window ends, so the message is dead-lettered one window after
  // its first failure, not up to a whole backoff step later.
  const delayMs = Math.min(retryDelayMs(facts.deliveryCount, retryAfterMs, facts.jitter), windowEndsAt - now);
  return { outcome: 'retried', log: { kind: 'nak', delayMs }, reason, forgetsHistory: false };
}

/**
 * Randomized exponential backoff: a delay between half and all of `base * 2^(attempt-1)`, so that
 * many messages failing together do not retry together. A destination's `Retry-After` is honoured
 * when it asks for longer, up to the cap.
 */
export function retryDelayMs(
  deliveryCount: number,
  retryAfterMs: number | undefined,
  jitter: number,
): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, BASE_RETRY_DELAY_MS * 2 ** Math.max(0, deliveryCount - 1));
  const spread = Math.min(1, Math.max(0, jitter));
  const jittered = Math.round(exponential / 2 + spread * (exponential / 2));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_DELAY_MS));
}

/**
 * What a dead letter's redrive came to: it makes one attempt, as stored, outside the log's consumer
 * (nothing to acknowledge or retry). Delivered, it leaves the dead letters; anything else leaves it
 * there with this attempt's reason, and it stays dead-lettered.
 */
export type RedriveSettlement =
  | { readonly outcome: 'delivered' }
  | {
      readonly outcome: 'dead_lettered';
      /** Why it stays a dead letter: this attempt's reason. */
      readonly reason: string;
      readonly deadLetterCause?: DeadLetterCause;
    };

export function decideRedriveSettlement(
  facts: { attempt: AttemptResult; poison?: undefined } | { attempt?: undefined; poison: { reason: string } },
): RedriveSettlement {
  if (facts.poison)
    return { outcome: 'dead_lettered', reason: facts.poison.reason, deadLetterCause: 'poison' };
  const { attempt } = facts;
  if (attempt.outcome === 'delivered') return { outcome: 'delivered' };
  return { outcome: 'dead_lettered', reason: attempt.reason };
}

function validTime(date: Date, name: string): number {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new RangeError(`${name} is an invalid Date`);
  return time;
}
