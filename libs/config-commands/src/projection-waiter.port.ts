/**
 * The read side as command handling needs it: a way to wait until the projections hold every event
 * up to a position of the store, so that a caller's next read sees its write (invariant 4).
 * The config read model provides it; the handler knows nothing else of the read side.
 */
export interface ProjectionWaiter {
  waitFor(position: bigint): Promise<void>;
}
