import type { TrackingLog, MessageToPublish } from '@tributary/event-log';

/**
 * What every deduplicating tracking log must do over the whole `DEDUPE_WINDOW`, whatever serves it (the
 * sqlite log's own table, or JetStream's short guard window plus the dedupe index). Real time: the
 * window is a few seconds and the guard shorter, so each case crosses them by waiting.
 */
export interface DeduplicatingLogTiming {
  /** The log's dedupe window. */
  windowMs: number;
  /** After this long an id is certainly forgotten (window plus one bucket, plus slack). */
  forgottenAfterMs: number;
  /** JetStream's own short window, or 0 when the log has none. */
  guardWindowMs: number;
}

export interface DeduplicatingLogContractFactory {
  timing: DeduplicatingLogTiming;
  /** A fresh, empty log. */
  open(): Promise<TrackingLog>;
  /** Every stored message id, in sequence order (a full read of the log). */
  storedMessageIds(log: TrackingLog): Promise<string[]>;
  /** Resolves once the log's dedupe state has caught up with what it stored (no-op when synchronous). */
  settled(log: TrackingLog): Promise<void>;
}

let counter = 0;
function freshId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

function messageOf(messageId: string, sourceId = 'src-a'): MessageToPublish {
  return { workspaceId: 'ws1', sourceId, messageId, payload: { type: 'track', event: 'Dedupe', messageId } };
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

export function describeDeduplicatingLogContract(
  name: string,
  factory: () => DeduplicatingLogContractFactory,
): void {
  describe(`Deduplicating log contract: ${name}`, () => {
    let log: TrackingLog;
    let subject: DeduplicatingLogContractFactory;

    beforeEach(async () => {
      subject = factory();
      log = await subject.open();
    });

    afterEach(async () => {
      await log.close();
    });

    function countOf(stored: string[], messageId: string): number {
      return stored.filter((id) => id === messageId).length;
    }

    it('refuses a duplicate sent after the guard window but inside the dedupe window, naming the first copy', async () => {
      const id = freshId('after-guard');
      const [first] = await log.publishBatch([messageOf(id)]);
      expect(first.duplicate).toBe(false);
      await subject.settled(log);
      await sleep(subject.timing.guardWindowMs + 300);
      const [retry] = await log.publishBatch([messageOf(id, 'src-b')]);
      expect(retry).toEqual({ messageId: id, duplicate: true, sequence: first.sequence });
      expect(countOf(await subject.storedMessageIds(log), id)).toBe(1);
    }, 30_000);

    it('accepts an id again once it is older than the dedupe window', async () => {
      const id = freshId('expired');
      const [first] = await log.publishBatch([messageOf(id)]);
      await subject.settled(log);
      await sleep(subject.timing.forgottenAfterMs);
      const [again] = await log.publishBatch([messageOf(id)]);
      expect(again.duplicate).toBe(false);
      expect(again.sequence).toBeGreaterThan(first.sequence);
      expect(countOf(await subject.storedMessageIds(log), id)).toBe(2);
    }, 30_000);

    it('stores an id repeated inside one batch once, the repeats naming the stored copy', async () => {
      const [a, b] = [freshId('in-batch-a'), freshId('in-batch-b')];
      const outcomes = await log.publishBatch([messageOf(a), messageOf(b), messageOf(a), messageOf(a)]);
      expect(outcomes.map((outcome) => outcome.duplicate)).toEqual([false, false, true, true]);
      expect(outcomes[2].sequence).toBe(outcomes[0].sequence);
      expect(outcomes[3].sequence).toBe(outcomes[0].sequence);
      const stored = await subject.storedMessageIds(log);
      expect([countOf(stored, a), countOf(stored, b)]).toEqual([1, 1]);
    }, 30_000);

    it('stores each id of concurrent batches sharing ids once', async () => {
      const shared = Array.from({ length: 50 }, () => freshId('concurrent'));
      const batches = Array.from({ length: 4 }, (_, batch) =>
        [...shared.slice(batch * 5), ...shared.slice(0, batch * 5)].map((id) => messageOf(id)),
      );
      const results = await Promise.all(batches.map((batch) => log.publishBatch(batch)));
      const stored = await subject.storedMessageIds(log);
      for (const id of shared) {
        expect(countOf(stored, id)).toBe(1);
        const outcomes = results.flat().filter((outcome) => outcome.messageId === id);
        expect(outcomes.filter((outcome) => !outcome.duplicate)).toHaveLength(1);
        expect(new Set(outcomes.map((outcome) => outcome.sequence)).size).toBe(1);
      }
    }, 30_000);

    it('refuses, in a later batch after the guard window, ids of earlier batches mixed with new ones', async () => {
      const old = [freshId('mixed-old'), freshId('mixed-old')];
      const first = await log.publishBatch(old.map((id) => messageOf(id)));
      await subject.settled(log);
      await sleep(subject.timing.guardWindowMs + 300);
      const fresh = freshId('mixed-new');
      const outcomes = await log.publishBatch([messageOf(old[1]), messageOf(fresh), messageOf(old[0])]);
      expect(outcomes.map((outcome) => outcome.duplicate)).toEqual([true, false, true]);
      expect(outcomes[0].sequence).toBe(first[1].sequence);
      expect(outcomes[2].sequence).toBe(first[0].sequence);
      const stored = await subject.storedMessageIds(log);
      expect([...old, fresh].map((id) => countOf(stored, id))).toEqual([1, 1, 1]);
    }, 30_000);
  });
}
