import type { PublishOutcome } from '@tributary/event-log';
import { followsTheLogItself, type DedupeIndex, type DedupeIndexEntries } from './dedupe-index.port';
import { IndexedSequences } from './indexed-sequences';
import type { FeedSubscription, MessageIdBatch, MessageIdFeed } from './message-id.feed';
import { KEY_BYTES } from './message-id.key';
import type { DedupeFaultHook, DedupeWriteStep } from './write-steps.fault';

/** Follower batches handed to the index and not yet committed, before the follower waits. */
const MAX_COMMITS_WAITING = 4;
/** Records of this replica's own appends sent to the index and not answered, beyond which a publish waits. */
const MAX_OWN_RECORDS_WAITING = 64;
/** How often the follower's need is judged: a hole in the indexed sequences, a follower with no work. */
const FOLLOWER_CHECK_MS = 50;
/**
 * How long a hole below the log's newest sequence may stay before the follower reads it: longer than
 * an append's acknowledgement takes under load (the hole is then one of ours, filled when it lands),
 * far shorter than the guard window (at most an eighth of it, for short guards).
 */
const HOLE_GRACE_MS = 500;
/** How often the log's newest sequence is read (at most an eighth of the guard window). */
const LOG_PROBE_MS = 500;
/**
 * A follower this close to the log's end has caught up: under load the log is never read to its very
 * end, and what lies beyond is this replica's own appends, recorded from their acknowledgements (or,
 * if not, a hole that starts the follower again).
 */
const FOLLOWER_CAUGHT_UP_MESSAGES = 5_000;
/** How long a follower started for a hole runs on once it has caught up; doubled while holes recur. */
const FOLLOWER_LINGER_MS = 1_000;
const MAX_FOLLOWER_LINGER_MS = 60_000;
/** A hole this soon after the follower stopped means another writer is busy: it lingers longer. */
const HOLES_RECUR_WITHIN_MS = 10_000;

export interface IndexFollowerOptions {
  /** `DEDUPE_GUARD_WINDOW`: the log's own duplicate window, which covers ids not indexed yet. */
  guardWindowMs: number;
  /** `DEDUPE_WINDOW`: a new index starts reading the log this far back. */
  windowMs: number;
  /** The clock of the index's hour buckets (ms); `Date.now` except in tests. */
  clock?: () => number;
  /**
   * How often the log's newest sequence is read, to measure the lag and to find other writers'
   * messages. Default 500 ms, or an eighth of the guard window when that is shorter.
   */
  lagProbeIntervalMs?: number;
  faults?: DedupeFaultHook;
}

/** What `/health/ready` and `/metrics` read. */
export interface DedupeStatus {
  /** The index has read the log up to where it stood at start, and its lag is inside half the guard. */
  ready: boolean;
  /** Why not ready, for the operator. */
  reason?: string;
  /** Log sequence up to which every id is indexed. */
  indexedSequence: number;
  /** Age of the oldest stored message not yet indexed (0: none). */
  lagMs: number;
  /** Messages stored beyond the indexed sequence, as last seen. */
  lagMessages: number;
  /** The log follower runs (catching up, or reading other writers' messages). */
  following: boolean;
}

/**
 * Keeps the dedupe index up to date with the log, and knows how far it is: which sequences are
 * indexed (`IndexedSequences`), how far the log has gone beyond them, and so whether a lookup can
 * be trusted (`status`).
 *
 * Two ways in: this replica's own appends, recorded from the log's acknowledgements (`recordOwn`),
 * and the log follower, which reads the log back (headers only) in sequence order for what this
 * replica did not append itself: the catch-up after a start, and other replicas' messages. The
 * follower runs only while it has work: a hole in the indexed sequences that outlives an
 * acknowledgement's delay starts it, so each replica sees the others' ids within a second or so of
 * their append; with one replica the log's server never sends the ids back.
 *
 * Every index write carries the checkpoint (every sequence up to it is indexed), so after a crash the
 * follower resumes from there: the index is a checkpointed cache of the log.
 */
export class IndexFollower {
  private readonly clock: () => number;
  /** The log follower while it runs (catching up, or reading other writers' messages). */
  private follower:
    { subscription: FeedSubscription; startedAt: number; lingerMs: number; caughtUp: boolean } | undefined;
  /** A transition of the follower (start or stop) under way: one at a time. */
  private followerChanging: Promise<void> | undefined;
  private lastFollowerStop = { at: -Infinity, lingerMs: FOLLOWER_LINGER_MS };
  /** The oldest hole in the indexed sequences, as `indexed.contiguous` and when it was first seen. */
  private hole: { after: number; since: number } | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private followerTimer: NodeJS.Timeout | undefined;
  private caughtUp = false;
  private startSequence = 0;
  private indexed = new IndexedSequences(0);
  /** Own appends not sent to the index yet (see `recordOwn`). */
  private gathered: GatheredAppends | undefined;
  private ownRecordsWaiting = 0;
  private logIdentity = '';
  /** (time, sequence) pairs, sequences increasing: the log was known to hold `sequence` at `time`. */
  private readonly observations: Array<{ time: number; sequence: number }> = [];
  private lastSequenceSeen = 0;
  private failure: Error | undefined;
  private closed = false;
  /** The index commits of the follower, chained in log order. */
  private commits: Promise<void> = Promise.resolve();
  private readonly commitsWaiting: Array<Promise<void>> = [];

  constructor(
    private readonly index: DedupeIndex,
    private readonly feed: MessageIdFeed,
    private readonly options: IndexFollowerOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Starts following from the index's checkpoint and resolves at once; `status().ready` turns true
   * once it has caught up (`whenCaughtUp`).
   */
  async start(): Promise<void> {
    const log = await this.feed.describe();
    let checkpoint = await this.index.checkpoint();
    // A log created again (its sequences start over) or one that lost its tail: the index would name
    // sequences the log does not hold, so it starts over from the log.
    if (checkpoint.logIdentity !== log.logIdentity || checkpoint.sequence > log.lastSequence) {
      checkpoint = { sequence: 0, logIdentity: log.logIdentity };
      await this.index.reset(checkpoint);
    }
    this.logIdentity = log.logIdentity;
    // A new index reads one window back (what is older is outside the window); a known one resumes
    // after its checkpoint, or at the oldest message left when retention deleted part of the rest.
    const fromSequence =
      checkpoint.sequence === 0
        ? await this.feed.firstSequenceSince(new Date(Date.now() - this.options.windowMs))
        : Math.max(checkpoint.sequence + 1, log.firstSequence);
    this.indexed = new IndexedSequences(fromSequence - 1);
    this.startSequence = log.lastSequence;
    this.lastSequenceSeen = log.lastSequence;
    this.observations.push({ time: Date.now(), sequence: log.lastSequence });
    this.caughtUp = this.indexed.contiguous >= log.lastSequence;
    if (!this.caughtUp) await this.startFollower(FOLLOWER_LINGER_MS);
    const probeMs = this.options.lagProbeIntervalMs ?? Math.min(LOG_PROBE_MS, this.options.guardWindowMs / 8);
    this.probeTimer = setInterval(() => void this.probeLog(), probeMs);
    this.probeTimer.unref();
    this.followerTimer = setInterval(() => this.superviseFollower(), FOLLOWER_CHECK_MS);
    this.followerTimer.unref();
  }

  status(): DedupeStatus {
    const lagMs = this.lagMs();
    const indexedSequence = this.indexed.contiguous;
    const lagMessages = Math.max(0, this.lastSequenceSeen - indexedSequence);
    const status = { indexedSequence, lagMs, lagMessages, following: this.follower !== undefined };
    if (this.failure)
      return { ready: false, reason: `the dedupe index failed: ${this.failure.message}`, ...status };
    if (!this.caughtUp) {
      return {
        ready: false,
        reason: `the dedupe index is catching up with the log (${indexedSequence} of ${this.startSequence})`,
        ...status,
      };
    }
    if (lagMs > this.options.guardWindowMs / 2) {
      return { ready: false, reason: `the dedupe index lags the log by ${Math.round(lagMs)} ms`, ...status };
    }
    return { ready: true, ...status };
  }

  /** Resolves once the index has read the log up to where it stood when the follower started. */
  async whenCaughtUp(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.caughtUp) {
      if (this.failure) throw this.failure;
      if (Date.now() > deadline) throw new Error(`the dedupe index did not catch up within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Resolves once every message the log held when called is indexed (tests, the bench). */
  async whenIndexed(timeoutMs = 60_000): Promise<void> {
    const { lastSequence } = await this.feed.describe();
    const deadline = Date.now() + timeoutMs;
    while (this.indexed.contiguous < lastSequence) {
      if (this.failure) throw this.failure;
      if (Date.now() > deadline)
        throw new Error(`the dedupe index did not reach ${lastSequence} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Stops following; what was handed to the index before still lands. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probeTimer);
    clearInterval(this.followerTimer);
    await this.recordGathered();
    await this.followerChanging;
    await this.follower?.subscription.stop();
    await this.commits.catch(() => undefined);
  }

  /**
   * Records this replica's own appends in the index from their acknowledgements, so the log follower
   * need not read them back: still after the append, so the index never holds an id the log lacks.
   * The appends of one event-loop turn go in one record (one message to the index's thread instead of
   * one per publish). Not awaited by the publish (JetStream's guard covers the ids until the record
   * lands), unless many records are waiting.
   */
  async recordOwn(appended: PublishOutcome[], freshIndexes: number[], keys: Buffer): Promise<void> {
    let gathered = this.gathered;
    if (!gathered) {
      gathered = this.gathered = new GatheredAppends();
      setImmediate(() => void this.recordGathered());
    }
    for (let position = 0; position < appended.length; position += 1) {
      // A duplicate the guard caught names a copy stored earlier (by us, or read by the follower).
      if (appended[position].duplicate) continue;
      gathered.add(appended[position], keys, freshIndexes[position] * KEY_BYTES);
    }
    if (this.ownRecordsWaiting >= MAX_OWN_RECORDS_WAITING) await gathered.recorded;
  }

  /** Sends the gathered appends to the index; a failed record fails the index, as a failed follower commit does. */
  private async recordGathered(): Promise<void> {
    const gathered = this.gathered;
    this.gathered = undefined;
    if (!gathered) return;
    this.ownRecordsWaiting += 1;
    try {
      if (gathered.messageIds.length === 0 || this.failure) return;
      await this.fault('before-index-commit');
      // Every record sent earlier commits first (the index serves calls in order), so the contiguous
      // mark counted with these sequences is true once this record is on disk.
      this.indexed.addAll(gathered.sequences);
      this.indexedMoved();
      const checkpoint = { sequence: this.indexed.contiguous, logIdentity: this.logIdentity };
      await this.index.record(gathered.entries(), checkpoint, this.clock());
      await this.fault('after-index-commit');
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      this.ownRecordsWaiting -= 1;
      gathered.settle();
    }
  }

  /**
   * Runs the log follower only while it has work: catching up, or reading what other writers (other
   * replicas) appended. A hole in the indexed sequences that outlives an append's acknowledgement is
   * such a message, and starts it; once caught up it stops after lingering, longer while holes recur.
   */
  private superviseFollower(): void {
    if (this.closed || this.failure || this.followerChanging) return;
    const now = Date.now();
    const contiguous = this.indexed.contiguous;
    if (this.follower) {
      if (
        this.caughtUp &&
        this.follower.caughtUp &&
        now - this.follower.startedAt >= this.follower.lingerMs
      ) {
        this.lastFollowerStop = { at: now, lingerMs: this.follower.lingerMs };
        this.changeFollower(() => this.stopFollower());
      }
      return;
    }
    if (this.lastSequenceSeen <= contiguous) {
      this.hole = undefined;
      return;
    }
    if (this.hole?.after !== contiguous) {
      this.hole = { after: contiguous, since: now };
      return;
    }
    if (now - this.hole.since < Math.min(HOLE_GRACE_MS, this.options.guardWindowMs / 8)) return;
    this.hole = undefined;
    const recurred = now - this.lastFollowerStop.at < HOLES_RECUR_WITHIN_MS;
    const lingerMs = recurred
      ? Math.min(this.lastFollowerStop.lingerMs * 2, MAX_FOLLOWER_LINGER_MS)
      : FOLLOWER_LINGER_MS;
    this.changeFollower(() => this.startFollower(lingerMs));
  }

  private changeFollower(change: () => Promise<void>): void {
    this.followerChanging = change()
      .catch((error: unknown) => {
        if (!this.closed) this.failure ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        this.followerChanging = undefined;
      });
  }

  /** Reads the log from the first sequence not known to be indexed. */
  private async startFollower(lingerMs: number): Promise<void> {
    const fromSequence = this.indexed.contiguous + 1;
    // An index that reads the log itself (on its own thread) keeps the ids off this event loop.
    const subscription = followsTheLogItself(this.index)
      ? await this.index.follow(fromSequence, this.logIdentity, ({ sequence, remaining }) =>
          this.indexedUpTo(sequence, remaining),
        )
      : await this.feed.follow(fromSequence, (batch) => this.indexBatch(batch));
    subscription.failed.catch((error: Error) => {
      if (!this.closed && this.follower?.subscription === subscription) this.failure ??= error;
    });
    this.follower = { subscription, startedAt: Date.now(), lingerMs, caughtUp: false };
  }

  private async stopFollower(): Promise<void> {
    const subscription = this.follower?.subscription;
    this.follower = undefined;
    await subscription?.stop();
    // Commits handed to the index before the stop still land (and still move the contiguous mark).
    await this.commits.catch(() => undefined);
  }

  /**
   * Hands the batch to the index and returns while it commits, so the next batch is read meanwhile;
   * commits are chained, each sent only once the previous one succeeded, so a failed commit can never
   * be followed by a later checkpoint that would skip its ids. At most a few commits wait in the chain.
   */
  private async indexBatch(batch: MessageIdBatch): Promise<void> {
    if (this.failure) throw this.failure;
    const lastSequence = batch.sequences[batch.sequences.length - 1];
    const entries = { messageIds: [] as string[], sequences: [] as number[] };
    for (let position = 0; position < batch.messageIds.length; position += 1) {
      if (batch.messageIds[position] === '') continue;
      entries.messageIds.push(batch.messageIds[position]);
      entries.sequences.push(batch.sequences[position]);
    }
    const commit = this.commits.then(async () => {
      await this.fault('before-index-commit');
      await this.index.record(
        entries,
        { sequence: lastSequence, logIdentity: this.logIdentity },
        this.clock(),
      );
      this.indexedUpTo(lastSequence, batch.remaining);
      await this.fault('after-index-commit');
    });
    this.commits = commit.catch((error: unknown) => {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      throw this.failure;
    });
    this.commits.catch(() => undefined);
    this.commitsWaiting.push(commit);
    // Settled commits leave the queue (the handlers return nothing: shift() returns a promise).
    const settled = () => {
      this.commitsWaiting.shift();
    };
    void commit.then(settled, settled);
    if (this.commitsWaiting.length >= MAX_COMMITS_WAITING)
      await this.commitsWaiting[0].catch(() => undefined);
    if (this.failure) throw this.failure;
  }

  /** Every message up to `lastSequence` is indexed; the log held `remaining` more at that moment. */
  private indexedUpTo(lastSequence: number, remaining: number): void {
    this.indexed.coverUpTo(lastSequence);
    this.observe(lastSequence + remaining);
    if (this.follower) this.follower.caughtUp = remaining <= FOLLOWER_CAUGHT_UP_MESSAGES;
    this.indexedMoved();
  }

  private indexedMoved(): void {
    const contiguous = this.indexed.contiguous;
    while (this.observations.length > 0 && this.observations[0].sequence <= contiguous)
      this.observations.shift();
    if (!this.caughtUp && contiguous >= this.startSequence) this.caughtUp = true;
  }

  observe(sequence: number): void {
    if (sequence <= this.lastSequenceSeen) return;
    this.lastSequenceSeen = sequence;
    // Real time, not the index's clock: the lag is measured against JetStream's guard window.
    const now = Date.now();
    const newest = this.observations[this.observations.length - 1];
    // Coalesce observations a few ms apart: the queue stays short at any rate.
    if (newest && now - newest.time < 20 && newest.sequence > this.indexed.contiguous)
      newest.sequence = sequence;
    else this.observations.push({ time: now, sequence });
  }

  private async probeLog(): Promise<void> {
    try {
      const log = await this.feed.describe();
      this.observe(log.lastSequence);
      if (!this.caughtUp && this.startSequence <= this.indexed.contiguous) this.caughtUp = true;
    } catch {
      // The log unreachable: publishes fail on their own; the lag stays as last measured.
    }
  }

  private lagMs(): number {
    const oldest = this.observations.find((observation) => observation.sequence > this.indexed.contiguous);
    return oldest ? Math.max(0, Date.now() - oldest.time) : 0;
  }

  private async fault(step: DedupeWriteStep): Promise<void> {
    if (this.options.faults) await this.options.faults(step);
  }
}

/** This replica's appends of one event-loop turn, gathered for one record in the index. */
class GatheredAppends {
  readonly messageIds: string[] = [];
  readonly sequences: number[] = [];
  private keys = Buffer.allocUnsafeSlow(1_024 * KEY_BYTES);
  /** Resolves once the record carrying these appends settled (never rejects). */
  readonly recorded: Promise<void>;
  settle!: () => void;

  constructor() {
    this.recorded = new Promise<void>((resolve) => (this.settle = resolve));
  }

  /** Adds one appended message, its key at `offset` in `keys`. */
  add(appended: PublishOutcome, keys: Buffer, offset: number): void {
    const at = this.messageIds.length * KEY_BYTES;
    if (at + KEY_BYTES > this.keys.length) {
      const grown = Buffer.allocUnsafeSlow(this.keys.length * 2);
      this.keys.copy(grown, 0, 0, at);
      this.keys = grown;
    }
    keys.copy(this.keys, at, offset, offset + KEY_BYTES);
    this.messageIds.push(appended.messageId);
    this.sequences.push(appended.sequence);
  }

  entries(): DedupeIndexEntries {
    const { messageIds, sequences } = this;
    return { messageIds, sequences, keys: this.keys.subarray(0, messageIds.length * KEY_BYTES) };
  }
}
