/**
 * A replay runs in the router under one name twice over: its consumer in the log and its lease (the
 * lease carries its counts from one holder to the next). The Config API reads both to tell how far a
 * running replay got, so the name is kept here, beside the replay's other rules.
 */
export const replayConsumerName = (replayId: string) => `replay_${replayId}`;
export const replayLeaseName = (replayId: string) => `replay_${replayId}`;

export interface ReplayProgress {
  /** Messages whose outcome the replay has counted and saved. */
  settled: number;
  /** Messages its consumer has still to get through: not given out yet, or given out and not settled. */
  remaining: number;
}

/**
 * How far a running replay got, from what its lease holds (`counts` per outcome, saved before each
 * ack) and its consumer's lag; null until a router has started it (no consumer yet).
 */
export function replayProgress(
  leaseData: Record<string, unknown> | undefined,
  lag: { undelivered: number; unacknowledged: number } | undefined,
): ReplayProgress | null {
  if (!lag) return null;
  const counts = leaseData?.counts;
  let settled = 0;
  if (counts && typeof counts === 'object') {
    for (const count of Object.values(counts))
      if (Number.isSafeInteger(count) && (count as number) > 0) settled += count as number;
  }
  return { settled, remaining: Math.max(0, lag.undelivered) + Math.max(0, lag.unacknowledged) };
}
