/** Where the dedupe index learns which ids the log stored: the log itself, read in sequence order. */
export interface MessageIdFeed {
  /** The log as it is now: its identity (changes when it is recreated) and its sequence range. */
  describe(): Promise<LogDescription>;
  /** The sequence of the oldest message stored at or after `time`; `lastSequence + 1` when none is. */
  firstSequenceSince(time: Date): Promise<number>;
  /**
   * Delivers every stored message's id and sequence from `fromSequence` on, in order, in batches. The next batch is
   * read only after `onBatch` resolved. `remaining` is how many messages the log held beyond the batch
   * when it was read (0: caught up at that moment).
   */
  follow(fromSequence: number, onBatch: (batch: MessageIdBatch) => Promise<void>): Promise<FeedSubscription>;
  close(): Promise<void>;
}

export interface LogDescription {
  logIdentity: string;
  /** Oldest sequence still stored (retention deletes below it); 0 when empty. */
  firstSequence: number;
  /** Newest sequence stored; 0 when empty. */
  lastSequence: number;
}

export interface MessageIdBatch {
  messageIds: string[];
  sequences: number[];
  /** Messages stored beyond this batch when it was read. */
  remaining: number;
}

export interface FeedSubscription {
  /** Stops reading; resolves once no `onBatch` call runs. */
  stop(): Promise<void>;
  /** Rejects when reading failed for good (the subscription stopped). */
  readonly failed: Promise<never>;
}
