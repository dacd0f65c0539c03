/**
 * Whether a redelivered message may be attempted again, or is poison: its deliveries keep ending
 * without any outcome because the process delivering it dies or stalls there (an out-of-memory
 * mapping, a native crash, an event loop held for minutes). Without this rule such a message comes
 * back after every ack wait and takes down whichever router replica gets it, forever.
 *
 * The facts are the log's: the delivery count, and the attempts it keeps for the message. A
 * redelivery records its attempt as started before the destination is called; a failure recorded by
 * the same delivery settles it; a crash leaves it unsettled. The first delivery records no start
 * (it is every message's way, and must stay one write), so it counts as unsettled when no failure
 * of it was recorded: a message in flight in a process killed by another one is charged one
 * unsettled delivery at most that way, and its later attempts run on their own (see `suspect`).
 */

/** A message whose deliveries ended this many times without an outcome is dead-lettered as poison. */
export const MAX_UNSETTLED_DELIVERIES = 3;

/** The beginning of a poison dead letter's reason, which the metrics and operators recognise it by. */
export const POISON_REASON_PREFIX = 'poison';

export interface PoisonFacts {
  /** The log's delivery count of the delivery about to attempt the message: 1 on the first. */
  deliveryCount: number;
  /** The attempts the log keeps for the message and consumer (failed ones and unsettled starts). */
  attempts: readonly { deliveryCount?: number; unsettled?: boolean }[];
}

export type PoisonCheck =
  /**
   * Attempt it. `suspect`: an earlier delivery never settled, so this one runs apart from other
   * suspects (one at a time in the process), where another message's crash cannot be charged to it.
   */
  | { action: 'attempt'; unsettledDeliveries: number; suspect: boolean }
  | { action: 'dead-letter'; unsettledDeliveries: number; reason: string };

export function decidePoison(facts: PoisonFacts): PoisonCheck {
  const unsettledDeliveries = unsettledDeliveriesBefore(facts);
  if (unsettledDeliveries >= MAX_UNSETTLED_DELIVERIES) {
    return { action: 'dead-letter', unsettledDeliveries, reason: poisonReason(unsettledDeliveries) };
  }
  return { action: 'attempt', unsettledDeliveries, suspect: unsettledDeliveries > 0 };
}

/** Why a poison message was given up on: the reason its dead letter (or a redrive's failure) carries. */
export function poisonReason(unsettledDeliveries: number): string {
  return (
    `${POISON_REASON_PREFIX}: ${unsettledDeliveries} deliveries never settled ` +
    '(the process delivering it stopped or stalled each time)'
  );
}

export function isPoisonReason(reason: string): boolean {
  return reason.startsWith(`${POISON_REASON_PREFIX}:`);
}

/** Deliveries before the current one that reached the destination's call and never settled. */
export function unsettledDeliveriesBefore({ deliveryCount, attempts }: PoisonFacts): number {
  if (!Number.isInteger(deliveryCount) || deliveryCount < 1) {
    throw new RangeError(`deliveryCount must be a positive integer, got ${deliveryCount}`);
  }
  if (deliveryCount === 1) return 0;
  let unsettled = 0;
  // A history kept before attempts carried their delivery count accounts for the first delivery.
  let firstAccounted = false;
  for (const attempt of attempts) {
    if (attempt.deliveryCount === undefined || attempt.deliveryCount === 1) firstAccounted = true;
    if (attempt.deliveryCount === undefined || attempt.deliveryCount >= deliveryCount) continue;
    if (attempt.unsettled === true) unsettled += 1;
  }
  if (!firstAccounted) unsettled += 1;
  return unsettled;
}
