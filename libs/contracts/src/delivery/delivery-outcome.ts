/**
 * What became of one message for one destination: the words the router's delivery metrics, its
 * recent message outcomes (the debugger), replays' counts, the Config API and the console all speak.
 * Each is marked final or not: a final outcome settles the message (it is acknowledged, and is not
 * delivered again); `retried` is the one outcome a later one replaces.
 *
 * Without dependencies, so the console imports it as it is (`@tributary/contracts/delivery/delivery-outcome`).
 */
const FINAL = {
  /** The destination accepted it. */
  delivered: true,
  /** The destination refused it for good, or nothing in this build can deliver to it. */
  discarded: true,
  /** An attempt failed in a way that may pass later: it is delivered again after a delay. */
  retried: false,
  /** A destination filter, the destination's own subscriptions or its insert function dropped it. */
  filtered: true,
  /** Routing did not send it: the destination is disabled, its `integrations` say no, or it is too old. */
  skipped: true,
  /** Its retry window ran out, or it was poison: it waits in the destination's dead letters. */
  dead_lettered: true,
} as const satisfies Record<string, boolean>;

export type DeliveryOutcome = keyof typeof FINAL;

/** Every outcome, in the order the metrics and the console list them. */
export const DELIVERY_OUTCOMES = Object.keys(FINAL) as readonly DeliveryOutcome[];

/** The outcomes that settle a message: every one but `retried`. */
export const FINAL_DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = DELIVERY_OUTCOMES.filter(
  (outcome) => FINAL[outcome],
);

export function isFinalOutcome(outcome: string): boolean {
  return Object.hasOwn(FINAL, outcome) && FINAL[outcome as DeliveryOutcome];
}

/**
 * Why a message was dead-lettered: its retry window ran out, or it was poison (its deliveries kept
 * ending without an outcome, the process delivering it dying or stalling each time).
 */
export const DEAD_LETTER_CAUSES = ['retries_exhausted', 'poison'] as const;
export type DeadLetterCause = (typeof DEAD_LETTER_CAUSES)[number];
