/**
 * What the tracking API did, counted since the process started; `TrackingMetrics` copies them into
 * its counter at each scrape.
 */
export class TrackingCounters {
  accepted = 0;
  duplicates = 0;
  rejected = 0;
  refusedWriteKeys = 0;
  unavailable = 0;
  /** Messages dropped because their user is suppressed, by workspace slug. */
  readonly suppressedByWorkspace = new Map<string, number>();
}
