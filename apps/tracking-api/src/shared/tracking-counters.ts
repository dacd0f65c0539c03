/** What the tracking API did, counted since the process started (exported as metrics later). */
export class TrackingCounters {
  accepted = 0;
  duplicates = 0;
  rejected = 0;
  refusedWriteKeys = 0;
  unavailable = 0;
}
