import type { LeaseRecord } from '@tributary/event-log';

/** When a replica last saw a lease change: the revision it read and when (its own monotonic clock). */
export interface LeaseSighting {
  revision: number;
  sinceMs: number;
}

export type ClaimStep =
  /** Write the lease as ours over this revision (0: create it); the write may still lose a race. */
  | { kind: 'take'; expectedRevision: number }
  /** Someone holds it and was heard from lately: remember this sighting and ask again later. */
  | { kind: 'wait'; sighting: LeaseSighting }
  /** The job is over: its last holder marked it done. */
  | { kind: 'done' };

/**
 * What a replica does about a lease it read, when it is not running the job itself. A holder writes its lease at least every third of the
 * time to live; a holder is presumed gone once the same revision has been seen for a whole time to
 * live, measured on the reader's own clock, so clocks of different machines are never compared.
 */
export function nextClaimStep(
  lease: LeaseRecord | null,
  previous: LeaseSighting | undefined,
  nowMs: number,
  ttlMs: number,
  me: string,
): ClaimStep {
  if (lease === null) return { kind: 'take', expectedRevision: 0 };
  if (lease.data['done'] === true) return { kind: 'done' };
  // Ours: this process wrote it, then lost track (a write that timed out yet was stored).
  if (lease.holder === '' || lease.holder === me) return { kind: 'take', expectedRevision: lease.revision };
  if (previous?.revision !== lease.revision) {
    return { kind: 'wait', sighting: { revision: lease.revision, sinceMs: nowMs } };
  }
  if (nowMs - previous.sinceMs >= ttlMs) return { kind: 'take', expectedRevision: lease.revision };
  return { kind: 'wait', sighting: previous };
}
