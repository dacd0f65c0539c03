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

export interface Leases {
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
}

/** DI token of the leases: the process's event log, which keeps them. */
export const LEASES = Symbol('Leases');
