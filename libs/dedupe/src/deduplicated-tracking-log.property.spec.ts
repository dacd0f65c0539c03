// Model-based property test of the dedupe write path on a real nats-server: random batches with
// duplicates of every age, an injected clock whose "hour" is a second, clock advances across bucket
// and window edges, crashes at every step of the write path (and of the index follower) followed by
// restarts. After every command the log and the index are checked against the model.
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EventLogUnavailableError,
  JetStreamEventLog,
  type MessageToPublish,
  type PublishOutcome,
} from '@tributary/event-log';
import { withNatsServer } from '@tributary/event-log/testing';
import { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
import {
  DEDUPE_WRITE_STEPS,
  DeduplicatedTrackingLog,
  type DedupeWriteStep,
} from './deduplicated-tracking-log';
import { SqliteDedupeIndex } from './sqlite-dedupe-index.adapter';
import { FILTER_BITS_PER_KEY } from './split-block-bloom.filter';

const HOUR = 1_000;
const WINDOW_BUCKETS = 4;
const WINDOW_MS = WINDOW_BUCKETS * HOUR;
/** JetStream's guard runs on real time; the injected clock does not move it. */
const GUARD_MS = 400;
/** A filter chain's first filter (16,384 keys): the most one bucket needs in this test. */
const FILTER_BYTES_PER_BUCKET = Math.ceil((16_384 * FILTER_BITS_PER_KEY) / 256) * 32;

class SimulatedCrash extends Error {
  constructor(readonly step: DedupeWriteStep) {
    super(`simulated crash at ${step}`);
  }
}

interface StoredCopy {
  sequence: number;
  /** Injected-clock time of the publish that stored it. */
  storedAt: number;
  /** Real time, for JetStream's guard. */
  storedAtReal: number;
  /**
   * Injected-clock time of the restart that indexed it again, when a crash lost it from the index's
   * write buffer: catch-up records an id in the bucket of the clock at that moment, so it is refused
   * for a window from then (longer than needed, never shorter).
   */
  reindexedAt?: number;
}

/** The system under test: one tracking API replica's log, restartable on the same files. */
class Replica {
  log!: DeduplicatedTrackingLog;
  private index!: SqliteDedupeIndex;
  private feed!: JetStreamMessageIdFeed;
  private inner!: JetStreamEventLog;
  crashAt: DedupeWriteStep | undefined;
  crashed = false;
  /** The index's checkpoint on disk when this replica started: later sequences are indexed again. */
  resumedAfter = 0;

  constructor(
    private readonly servers: string,
    private readonly indexFile: string,
    readonly clock: { now: number },
  ) {}

  async start(): Promise<void> {
    this.crashed = false;
    this.inner = await JetStreamEventLog.connect({
      servers: this.servers,
      dedupeWindowMs: WINDOW_MS,
      retentionMs: 3_600_000,
      trackingDuplicateWindowMs: GUARD_MS,
      publishTimeoutMs: 5_000,
    });
    this.index = new SqliteDedupeIndex(this.indexFile, { windowMs: WINDOW_MS, bucketMs: HOUR });
    this.resumedAfter = (await this.index.checkpoint()).sequence;
    this.feed = await JetStreamMessageIdFeed.connect(this.servers);
    this.log = await DeduplicatedTrackingLog.start(this.inner, this.index, this.feed, {
      guardWindowMs: GUARD_MS,
      // How far back (real time) a new index reads the log. The injected clock runs far ahead of real
      // time here, so a window of real time would miss ids still inside the clock's window: a new
      // index reads the whole log instead, and indexes it at the clock of the restart.
      windowMs: 3_600_000,
      clock: () => this.clock.now,
      lagProbeIntervalMs: 50,
      faults: (step) => {
        if (this.crashAt !== step || this.crashed) return;
        this.crashed = true;
        this.crashAt = undefined;
        throw new SimulatedCrash(step);
      },
    });
    await this.log.whenCaughtUp(20_000);
  }

  /** A crash: nothing is closed gracefully beyond what a dead process leaves (committed state only). */
  async crashAndRestart(): Promise<void> {
    // The index loses its write buffer, as a killed process would; the log is closed only to free
    // its connections.
    await this.index.abandon();
    await this.log.close().catch(() => undefined);
    await this.start();
  }

  async stop(): Promise<void> {
    await this.log.close().catch(() => undefined);
  }

  indexLookup(messageIds: string[]): Promise<Float64Array> {
    return this.index.lookup(messageIds, this.clock.now);
  }

  indexStats() {
    return this.index.stats();
  }
}

/** What the model knows, and the checks run after each command. */
class Model {
  readonly copies = new Map<string, StoredCopy[]>();
  readonly acknowledged = new Map<string, number>();
  readonly everUsed: string[] = [];
  private nextId = 0;

  freshId(): string {
    this.nextId += 1;
    const id = `m-${this.nextId}`;
    this.everUsed.push(id);
    return id;
  }

  latestCopy(messageId: string): StoredCopy | undefined {
    const copies = this.copies.get(messageId);
    return copies?.[copies.length - 1];
  }

  /** Whether a publish at `at` must store the id anew: never stored, or its copy is out of every window. */
  mustStoreAnew(messageId: string, at: { fake: number; real: number }): boolean {
    const latest = this.latestCopy(messageId);
    if (!latest) return true;
    const indexedAt = Math.max(latest.storedAt, latest.reindexedAt ?? latest.storedAt);
    // Older than the window plus a bucket (the slack of hour buckets), and than JetStream's guard.
    return at.fake - indexedAt > WINDOW_MS + HOUR && at.real - latest.storedAtReal > GUARD_MS + 300;
  }

  /** After a crash and restart: the copies the index had not written to disk are indexed again now. */
  reindexedAfter(checkpointSequence: number, now: number): void {
    for (const copy of [...this.copies.values()].flat()) {
      if (copy.sequence > checkpointSequence) copy.reindexedAt = now;
    }
  }
}

interface World {
  model: Model;
  replica: Replica;
  servers: string;
}

function batchOf(messageIds: string[]): MessageToPublish[] {
  return messageIds.map((messageId) => ({
    workspaceId: 'ws',
    sourceId: 'src',
    messageId,
    payload: { messageId },
  }));
}

/** Every stored (messageId, sequence) of TRACKING, read back headers-only. */
async function readLog(servers: string): Promise<Map<number, string>> {
  const feed = await JetStreamMessageIdFeed.connect(servers);
  try {
    const { lastSequence } = await feed.describe();
    const log = new Map<number, string>();
    if (lastSequence === 0) return log;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const subscription = await feed.follow(1, async (batch) => {
      batch.sequences.forEach((sequence, position) => log.set(sequence, batch.messageIds[position]));
      if (batch.sequences[batch.sequences.length - 1] >= lastSequence) done();
    });
    await finished;
    await subscription.stop();
    return log;
  } finally {
    await feed.close();
  }
}

/** Publishes, retrying while the index is catching up (503) as a client would. */
async function publishRetrying(replica: Replica, messageIds: string[]): Promise<PublishOutcome[]> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await replica.log.publishBatch(batchOf(messageIds));
    } catch (error) {
      if (!(error instanceof EventLogUnavailableError) || replica.crashed || attempt > 400) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Checks one publish's outcomes against the model, then records them in it. */
function expectOutcomes(
  world: World,
  messageIds: string[],
  outcomes: PublishOutcome[],
  publishedAt: { fake: number; real: number },
): void {
  const { model } = world;
  const inBatch = new Map<string, number>();
  outcomes.forEach((outcome, position) => {
    const messageId = messageIds[position];
    expect(outcome.messageId).toBe(messageId);
    const earlierInBatch = inBatch.get(messageId);
    if (earlierInBatch !== undefined) {
      expect(outcome).toEqual({ messageId, duplicate: true, sequence: earlierInBatch });
      return;
    }
    const latest = model.latestCopy(messageId);
    if (latest && publishedAt.fake - latest.storedAt < WINDOW_MS) {
      // Inside the window: refused, naming a copy already stored. Not always the latest: an older copy
      // still in its bucket's hour of slack (a window and up to an hour) can answer first while the
      // latest is not indexed yet (right after a crash's catch-up).
      const stored = (model.copies.get(messageId) ?? []).map((copy) => copy.sequence);
      expect(outcome).toEqual({ messageId, duplicate: true, sequence: expect.any(Number) });
      expect(stored).toContain(outcome.sequence);
    } else if (model.mustStoreAnew(messageId, publishedAt)) {
      expect(outcome.duplicate).toBe(false);
    }
    if (!outcome.duplicate) {
      const copies = model.copies.get(messageId) ?? [];
      copies.push({ sequence: outcome.sequence, storedAt: publishedAt.fake, storedAtReal: publishedAt.real });
      model.copies.set(messageId, copies);
    }
    model.acknowledged.set(messageId, outcome.sequence);
    inBatch.set(messageId, outcome.sequence);
  });
}

/** Copies the model has not seen (stored by a batch that crashed before its answer): learned from the log. */
async function learnUnacknowledgedCopies(
  world: World,
  crashedAt: { fake: number; real: number },
): Promise<void> {
  const log = await readLog(world.servers);
  const known = new Set([...world.model.copies.values()].flat().map((copy) => copy.sequence));
  for (const [sequence, messageId] of [...log.entries()].sort((a, b) => a[0] - b[0])) {
    if (known.has(sequence)) continue;
    const copies = world.model.copies.get(messageId) ?? [];
    copies.push({ sequence, storedAt: crashedAt.fake, storedAtReal: crashedAt.real });
    copies.sort((a, b) => a.sequence - b.sequence);
    world.model.copies.set(messageId, copies);
  }
}

async function checkInvariants(world: World): Promise<void> {
  const { model, replica } = world;
  const log = await readLog(world.servers);
  // 1. Every acknowledged id is in the log at the sequence it was answered with.
  for (const [messageId, sequence] of model.acknowledged) expect(log.get(sequence)).toBe(messageId);
  // 2. No id stored twice within the window; and the model knows every stored copy.
  expect([...model.copies.values()].flat().length).toBe(log.size);
  for (const [messageId, copies] of model.copies) {
    for (let index = 1; index < copies.length; index += 1) {
      expect({ messageId, gap: copies[index].storedAt - copies[index - 1].storedAt >= WINDOW_MS }).toEqual({
        messageId,
        gap: true,
      });
    }
  }
  // 4. The index holds nothing the log lacks: every sequence it answers is that id's in the log.
  if (model.everUsed.length > 0) {
    const found = await replica.indexLookup(model.everUsed);
    model.everUsed.forEach((messageId, position) => {
      if (found[position] > 0)
        expect({ messageId, stored: log.get(found[position]) }).toEqual({ messageId, stored: messageId });
    });
  }
  // 5. Memory stays flat: never more buckets (and filter bytes) than one window holds.
  const stats = await replica.indexStats();
  expect(stats.buckets.length).toBeLessThanOrEqual(WINDOW_BUCKETS + 2);
  expect(stats.filterBytes).toBeLessThanOrEqual((WINDOW_BUCKETS + 2) * FILTER_BYTES_PER_BUCKET);
}

type Command = fc.AsyncCommand<Model, World>;

/** Picks ids for a batch: fresh ones, ones used before (any age), and repeats inside the batch. */
function pickIds(model: Model, picks: Array<{ kind: 'fresh' | 'old' | 'repeat'; at: number }>): string[] {
  const ids: string[] = [];
  for (const pick of picks) {
    if (pick.kind === 'old' && model.everUsed.length > 0)
      ids.push(model.everUsed[pick.at % model.everUsed.length]);
    else if (pick.kind === 'repeat' && ids.length > 0) ids.push(ids[pick.at % ids.length]);
    else ids.push(model.freshId());
  }
  return ids;
}

const pickArbitrary = fc.array(
  fc.record({
    kind: fc.constantFrom('fresh' as const, 'old' as const, 'old' as const, 'repeat' as const),
    at: fc.nat(),
  }),
  { minLength: 1, maxLength: 12 },
);

class PublishCommand implements Command {
  constructor(readonly picks: Array<{ kind: 'fresh' | 'old' | 'repeat'; at: number }>) {}
  check = () => true;
  async run(_model: Model, world: World): Promise<void> {
    const ids = pickIds(world.model, this.picks);
    const publishedAt = { fake: world.replica.clock.now, real: Date.now() };
    const outcomes = await publishRetrying(world.replica, ids);
    expectOutcomes(world, ids, outcomes, publishedAt);
    await checkInvariants(world);
  }
  toString = () => `publish(${this.picks.map((pick) => pick.kind).join(',')})`;
}

class AdvanceClockCommand implements Command {
  constructor(readonly byMs: number) {}
  check = () => true;
  async run(_model: Model, world: World): Promise<void> {
    // The clock moves on only once the index has read what was stored: in a running process the
    // follower lags by milliseconds, never by hours of the clock.
    await world.replica.log.whenIndexed(20_000);
    world.replica.clock.now += this.byMs;
    // Real time passes too, so the guard window (real time) is behind ids older than a bucket.
    if (this.byMs >= HOUR) await new Promise((resolve) => setTimeout(resolve, GUARD_MS + 150));
    await checkInvariants(world);
  }
  toString = () => `advance(${this.byMs})`;
}

class CrashCommand implements Command {
  constructor(
    readonly step: DedupeWriteStep,
    readonly picks: Array<{ kind: 'fresh' | 'old' | 'repeat'; at: number }>,
  ) {}
  check = () => true;
  async run(_model: Model, world: World): Promise<void> {
    const { replica } = world;
    const ids = pickIds(world.model, this.picks);
    const crashedAt = { fake: replica.clock.now, real: Date.now() };
    const newBeforeCrash = new Set(ids.filter((id) => world.model.mustStoreAnew(id, crashedAt)));
    const logSizeBeforeCrash = (await readLog(world.servers)).size;
    replica.crashAt = this.step;
    const publishing = publishRetrying(replica, ids).then(
      (outcomes) => ({ outcomes }),
      (error: unknown) => ({ error }),
    );
    const result = await publishing;
    if ('outcomes' in result) {
      // A follower step: the publish was answered; the crash comes when the follower commits.
      expectOutcomes(world, ids, result.outcomes, crashedAt);
      const deadline = Date.now() + 5_000;
      while (!replica.crashed && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      if (!replica.crashed) {
        // Nothing new was stored (every id a duplicate), so the follower had nothing to commit.
        replica.crashAt = undefined;
        await checkInvariants(world);
        return;
      }
    } else {
      // The crash itself, or (a follower step) the refusal that follows it: the index is down.
      expect(replica.crashed).toBe(true);
    }
    await replica.crashAndRestart();
    await learnUnacknowledgedCopies(world, crashedAt);
    world.model.reindexedAfter(replica.resumedAfter, replica.clock.now);
    if (this.step === 'after-lookup') expect((await readLog(world.servers)).size).toBe(logSizeBeforeCrash);
    // 3. The client's retry of the same batch after the crash is stored, or names the stored copy.
    const retriedAt = { fake: replica.clock.now, real: Date.now() };
    const outcomes = await publishRetrying(replica, ids);
    expectOutcomes(world, ids, outcomes, retriedAt);
    if (this.step === 'after-lookup') {
      // Nothing was appended: every id that was new before the crash is stored by the retry, never
      // refused, unless the restart's catch-up indexed its older copy again (at the clock of the
      // restart, which refuses it for a window from then: longer than needed, never shorter).
      for (const id of newBeforeCrash) {
        if (!world.model.mustStoreAnew(id, retriedAt)) continue;
        expect({ id, duplicate: outcomes[ids.indexOf(id)].duplicate }).toEqual({ id, duplicate: false });
      }
    }
    await checkInvariants(world);
  }
  toString = () => `crash(${this.step}, ${this.picks.length} ids)`;
}

class ThroughWindowsCommand implements Command {
  check = () => true;
  async run(_model: Model, world: World): Promise<void> {
    // Several windows of hours, each with a batch of new ids and repeats of old ones.
    for (let hour = 0; hour < 3 * WINDOW_BUCKETS; hour += 1) {
      await new PublishCommand([
        { kind: 'fresh', at: 0 },
        { kind: 'fresh', at: 0 },
        { kind: 'old', at: hour * 7 },
        { kind: 'old', at: hour * 13 },
      ]).run(world.model, world);
      await new AdvanceClockCommand(HOUR).run(world.model, world);
    }
  }
  toString = () => 'through-windows';
}

const commandArbitraries = [
  pickArbitrary.map((picks) => new PublishCommand(picks)),
  fc
    .oneof(
      fc.integer({ min: 1, max: HOUR - 1 }),
      fc.integer({ min: HOUR, max: 2 * HOUR }),
      fc.integer({ min: WINDOW_MS - HOUR, max: WINDOW_MS + 2 * HOUR }),
    )
    .map((byMs) => new AdvanceClockCommand(byMs)),
  fc
    .tuple(fc.constantFrom(...DEDUPE_WRITE_STEPS), pickArbitrary)
    .map(([step, picks]) => new CrashCommand(step, picks)),
  fc.constant(new ThroughWindowsCommand()),
];

/** `FC_SEED` and `FC_PATH` (from a failure's report) run that one case again, for debugging. */
function replayOfAFailure(): { seed?: number; path?: string } {
  const seed = process.env.FC_SEED;
  return seed ? { seed: Number(seed), path: process.env.FC_PATH } : {};
}

describe('DeduplicatedTrackingLog, model-based with crashes and an injected clock', () => {
  const nats = withNatsServer();

  it('keeps every acknowledged id in the log, each at most once per window, and the index inside the log', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbitraries, { maxCommands: 14 }), async (commands) => {
        await nats.deleteStreams();
        const directory = mkdtempSync(join(tmpdir(), 'dedupe-property-'));
        // Start mid-bucket, so small advances stay inside it and larger ones cross edges.
        const clock = { now: 1_000_000 * HOUR + 250 };
        const replica = new Replica(nats.server.url, join(directory, 'index.sqlite'), clock);
        await replica.start();
        try {
          const model = new Model();
          await fc.asyncModelRun(
            () => ({ model, real: { model, replica, servers: nats.server.url } }),
            commands,
          );
        } finally {
          await replica.stop();
          rmSync(directory, { recursive: true, force: true });
        }
      }),
      { numRuns: 6, endOnFailure: true, ...replayOfAFailure() },
    );
  }, 600_000);
});
