import type { ReplayCounts } from '@tributary/config-domain';
import type { DeliveryOutcome } from '@tributary/contracts';
import type { HeldLease } from '../job-leases/job-leases';

/** A replay's progress as its lease carries it from one holder to the next. */
export interface ReplayCheckpoint {
  counts: ReplayCounts;
  /**
   * Log sequences already counted whose ack was not confirmed when this was saved: delivered again,
   * such a message is acked without being sent or counted a second time.
   */
  settled: number[];
}

/** Settlements saved together: the lease is written once per batch, not once per message. */
export const TALLY_BATCH_SIZE = 32;
/** The longest a settled message waits for its batch to be saved. */
const BATCH_DELAY_MS = 50;

const NO_COUNTS: ReplayCounts = { delivered: 0, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 };

interface Settlement {
  sequence: number;
  outcome: DeliveryOutcome | undefined;
  ack(): Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Exact counts for a replay, even when the replica running it dies and another takes over. A
 * message's outcome is saved in the replay's lease BEFORE the message is acked: a holder that dies
 * before saving leaves the message unacked, so the next holder gets it again and counts it once; one
 * that dies after saving but before acking left the sequence in `settled`, so the next holder acks it
 * without counting it again. Counts in memory alone would lose everything the dead replica counted.
 */
export class ReplayTally {
  private counts: ReplayCounts;
  /** Counted (in a saved checkpoint) but not known to be acked. */
  private readonly unconfirmed: Set<number>;
  private pending: Settlement[] = [];
  private timer?: NodeJS.Timeout;
  private saving: Promise<void> = Promise.resolve();
  /** A save is queued that has not taken the pending settlements yet: it will take those that come. */
  private saveQueued = false;

  constructor(
    private readonly lease: HeldLease,
    checkpoint: Partial<ReplayCheckpoint>,
  ) {
    this.counts = { ...NO_COUNTS, ...checkpoint.counts };
    this.unconfirmed = new Set(Array.isArray(checkpoint.settled) ? checkpoint.settled : []);
  }

  /** Counts of every message settled and saved so far: the replay's counts once it is drained. */
  get savedCounts(): ReplayCounts {
    return { ...this.counts };
  }

  /** True when this message was counted before (by this holder or a previous one). */
  countedBefore(sequence: number): boolean {
    return this.unconfirmed.has(sequence);
  }

  /** Acks a message counted before, without counting it again. */
  async ackCountedBefore(sequence: number, ack: () => Promise<void>): Promise<void> {
    await ack();
    this.unconfirmed.delete(sequence);
  }

  /**
   * Counts the outcome (none: acked without an outcome, such as a message past the replay's end) and
   * acks the message once the count is saved. Rejects when the save fails: the message stays unacked
   * and is delivered again after its ack wait.
   */
  settle(sequence: number, outcome: DeliveryOutcome | undefined, ack: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ sequence, outcome, ack, resolve, reject });
      // A gathered call settles hundreds of messages in one turn: one save for them, not one per
      // settlement past the batch size.
      if (this.saveQueued) return;
      if (this.pending.length >= TALLY_BATCH_SIZE) {
        clearTimeout(this.timer);
        this.timer = undefined;
        void this.saveBatch();
      } else if (!this.timer) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          void this.saveBatch();
        }, BATCH_DELAY_MS);
      }
    });
  }

  private saveBatch(): Promise<void> {
    // One save at a time: a checkpoint must list every count the previous ones left unconfirmed. The
    // acks are not part of the chain: a batch's sequences are in `unconfirmed` from its save on, so the
    // next checkpoint lists them while their acks are still on the wire, and the next save need not
    // wait for those round trips.
    this.saveQueued = true;
    this.saving = this.saving.then(() => {
      this.saveQueued = false;
      return this.saveNextBatch();
    });
    return this.saving;
  }

  private async saveNextBatch(): Promise<void> {
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    const counts = { ...this.counts };
    for (const settlement of batch) {
      if (settlement.outcome !== undefined && settlement.outcome !== 'retried')
        counts[settlement.outcome] += 1;
    }
    const checkpoint: ReplayCheckpoint = {
      counts,
      settled: [...this.unconfirmed, ...batch.map((settlement) => settlement.sequence)],
    };
    try {
      await this.lease.save({ ...checkpoint });
    } catch (error) {
      batch.forEach((settlement) => settlement.reject(error));
      return;
    }
    this.counts = counts;
    batch.forEach((settlement) => this.unconfirmed.add(settlement.sequence));
    // One promise per ack (no async function and await around each): promise hooks cost per promise.
    for (const settlement of batch) {
      let acked: Promise<void>;
      try {
        acked = settlement.ack();
      } catch (error) {
        settlement.reject(error);
        continue;
      }
      acked.then(() => {
        this.unconfirmed.delete(settlement.sequence);
        settlement.resolve();
      }, settlement.reject);
    }
  }
}
