import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Database } from '@tributary/sqlite';
import { Registry } from 'prom-client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEAD_LETTER_STREAM,
  JetStreamEventLog,
  SqliteEventLog,
  TRACKING_STREAM,
  type TrackingLog,
} from '@tributary/event-log';
import { withNatsServer } from '@tributary/event-log/testing';
import { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
import { registerDedupeIndexMetrics } from './dedupe-index.metrics';
import { DeduplicatedTrackingLog } from './deduplicated-tracking-log';
import { describeDeduplicatingLogContract } from './deduplicating-log.contract';
import { WorkerDedupeIndex } from './worker-dedupe-index.adapter';
import { storedTrackingMessageIds } from '../../../test/support/tracking-log.reader';

const WINDOW_MS = 3_000;
const BUCKET_MS = 500;
const GUARD_MS = 600;

const nats = withNatsServer();

/** The JetStream log under the index: TRACKING's duplicate window is the guard. */
function connectInner(): Promise<JetStreamEventLog> {
  return JetStreamEventLog.connect({
    servers: nats.server.url,
    dedupeWindowMs: WINDOW_MS,
    retentionMs: 3_600_000,
    trackingDuplicateWindowMs: GUARD_MS,
  });
}

describeDeduplicatingLogContract(
  'jetstream with the dedupe index (guard window shorter than the window)',
  () => ({
    timing: { windowMs: WINDOW_MS, guardWindowMs: GUARD_MS, forgottenAfterMs: WINDOW_MS + BUCKET_MS + 500 },
    async open() {
      await nats.deleteStreams();
      const inner = await connectInner();
      const index = await WorkerDedupeIndex.start(
        join(mkdtempSync(join(tmpdir(), 'dedupe-log-')), 'index.sqlite'),
        {
          windowMs: WINDOW_MS,
          bucketMs: BUCKET_MS,
        },
        nats.server.url,
      );
      const feed = await JetStreamMessageIdFeed.connect(nats.server.url);
      const log = await DeduplicatedTrackingLog.start(inner, index, feed, {
        guardWindowMs: GUARD_MS,
        windowMs: WINDOW_MS,
      });
      await log.whenCaughtUp();
      return log;
    },
    storedMessageIds: () => storedTrackingMessageIds(nats.server.url),
    settled: (log: TrackingLog) => (log as DeduplicatedTrackingLog).whenIndexed(),
  }),
);

describe('the JetStream guard window', () => {
  it('is the TRACKING stream duplicate window, while dead letters keep the whole window', async () => {
    await nats.deleteStreams();
    const log = await connectInner();
    const connection = await connect({ servers: nats.server.url });
    try {
      const manager = await jetstreamManager(connection);
      expect((await manager.streams.info(TRACKING_STREAM)).config.duplicate_window).toBe(
        GUARD_MS * 1_000_000,
      );
      expect((await manager.streams.info(DEAD_LETTER_STREAM)).config.duplicate_window).toBe(
        WINDOW_MS * 1_000_000,
      );
    } finally {
      await connection.close();
      await log.close();
    }
  });
});

let sqliteFile = '';
describeDeduplicatingLogContract('sqlite event log (its own dedupe table)', () => ({
  timing: { windowMs: WINDOW_MS, guardWindowMs: 0, forgottenAfterMs: WINDOW_MS + 500 },
  async open() {
    sqliteFile = join(mkdtempSync(join(tmpdir(), 'dedupe-sqlite-log-')), 'event-log.sqlite');
    return SqliteEventLog.open({ file: sqliteFile, dedupeWindowMs: WINDOW_MS, retentionMs: 3_600_000 });
  },
  async storedMessageIds() {
    const database = new Database(sqliteFile, { readonly: true });
    try {
      return database.prepare('SELECT message_id FROM messages ORDER BY sequence').pluck().all() as string[];
    } finally {
      database.close();
    }
  },
  settled: async () => undefined,
}));

describe('a new dedupe index on a log that already holds messages', () => {
  async function startIndexedLog(inner: JetStreamEventLog): Promise<DeduplicatedTrackingLog> {
    const index = await WorkerDedupeIndex.start(
      join(mkdtempSync(join(tmpdir(), 'dedupe-new-index-')), 'index.sqlite'),
      { windowMs: WINDOW_MS, bucketMs: BUCKET_MS },
      nats.server.url,
    );
    const feed = await JetStreamMessageIdFeed.connect(nats.server.url);
    return DeduplicatedTrackingLog.start(inner, index, feed, {
      guardWindowMs: GUARD_MS,
      windowMs: WINDOW_MS,
    });
  }

  const message = (messageId: string) => ({ workspaceId: 'ws1', sourceId: 'src-a', messageId, payload: {} });

  it('reads back one window only, becomes ready, then refuses the ids of that window', async () => {
    await nats.deleteStreams();
    const writer = await connectInner();
    await writer.publishBatch([message('older-than-window')]);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 300));
    const [recent] = await writer.publishBatch([message('inside-window')]);
    await writer.close();

    const log = await startIndexedLog(await connectInner());
    try {
      await log.whenCaughtUp();
      expect(log.dedupeStatus()).toMatchObject({
        ready: true,
        indexedSequence: recent.sequence,
        lagMessages: 0,
      });
      const stats = await log.dedupeIndexStats();
      expect(stats.buckets.reduce((sum, bucket) => sum + bucket.ids, 0)).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, GUARD_MS + 200));
      const [again] = await log.publishBatch([message('inside-window')]);
      expect(again).toEqual({ messageId: 'inside-window', duplicate: true, sequence: recent.sequence });
    } finally {
      await log.close();
    }
  }, 30_000);

  it('is ready at once when every stored message is older than the window', async () => {
    await nats.deleteStreams();
    const writer = await connectInner();
    await writer.publishBatch([message('old-1'), message('old-2')]);
    await writer.close();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 300));
    const log = await startIndexedLog(await connectInner());
    try {
      expect(log.dedupeStatus().ready).toBe(true);
      const [accepted] = await log.publishBatch([message('old-1')]);
      expect(accepted.duplicate).toBe(false);
    } finally {
      await log.close();
    }
  }, 30_000);
});

describe("a replica's own appends and other writers' messages", () => {
  const message = (messageId: string) => ({ workspaceId: 'ws1', sourceId: 'src-a', messageId, payload: {} });

  async function until(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('indexes its own appends without reading the log back, and reads back only what another writer appended', async () => {
    await nats.deleteStreams();
    const index = await WorkerDedupeIndex.start(
      join(mkdtempSync(join(tmpdir(), 'dedupe-own-')), 'index.sqlite'),
      { windowMs: WINDOW_MS, bucketMs: BUCKET_MS },
      nats.server.url,
    );
    const feed = await JetStreamMessageIdFeed.connect(nats.server.url);
    const log = await DeduplicatedTrackingLog.start(await connectInner(), index, feed, {
      guardWindowMs: GUARD_MS,
      windowMs: WINDOW_MS,
    });
    const otherWriter = await connectInner();
    const followed: boolean[] = [];
    const watch = setInterval(() => followed.push(log.dedupeStatus().following), 5);
    try {
      const own = await log.publishBatch([message('own-1'), message('own-2')]);
      await log.whenIndexed(2_000);
      await new Promise((resolve) => setTimeout(resolve, GUARD_MS + 200));
      expect(await log.publishBatch([message('own-1')])).toEqual([
        { messageId: 'own-1', duplicate: true, sequence: own[0].sequence },
      ]);
      expect(followed).not.toContain(true);

      // Another replica's append leaves a hole in what this one indexed: its follower reads it.
      const [foreign] = await otherWriter.publishBatch([message('foreign-1')]);
      await until(
        'the foreign message is indexed',
        () => log.dedupeStatus().indexedSequence >= foreign.sequence,
      );
      expect(followed).toContain(true);
      await new Promise((resolve) => setTimeout(resolve, GUARD_MS + 200));
      expect(await log.publishBatch([message('foreign-1')])).toEqual([
        { messageId: 'foreign-1', duplicate: true, sequence: foreign.sequence },
      ]);
      // With nothing more to read, the follower stops again.
      await until('the follower stops', () => !log.dedupeStatus().following);
    } finally {
      clearInterval(watch);
      await otherWriter.close();
      await log.close();
    }
  }, 30_000);
});

describe('dedupe index metrics', () => {
  it('exposes index size, ids per bucket, lookups, hits and catch-up lag on the registry', async () => {
    await nats.deleteStreams();
    const inner = await connectInner();
    const index = await WorkerDedupeIndex.start(
      join(mkdtempSync(join(tmpdir(), 'dedupe-metrics-')), 'index.sqlite'),
      { windowMs: WINDOW_MS, bucketMs: BUCKET_MS },
    );
    const feed = await JetStreamMessageIdFeed.connect(nats.server.url);
    const log = await DeduplicatedTrackingLog.start(inner, index, feed, {
      guardWindowMs: GUARD_MS,
      windowMs: WINDOW_MS,
    });
    const registry = new Registry();
    registerDedupeIndexMetrics(registry, log);
    try {
      const batch = ['m-1', 'm-2', 'm-3'].map((messageId) => ({
        workspaceId: 'ws1',
        sourceId: 'src-a',
        messageId,
        payload: {},
      }));
      await log.publishBatch(batch);
      await log.whenIndexed();
      await new Promise((resolve) => setTimeout(resolve, GUARD_MS + 200));
      await log.publishBatch(batch.slice(0, 2));
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const text = await registry.metrics();
      const value = (name: string) =>
        Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value('tributary_dedupe_index_ids')).toBe(3);
      expect(value('tributary_dedupe_index_lookups_total')).toBe(5);
      expect(value('tributary_dedupe_index_hits_total')).toBe(2);
      expect(value('tributary_dedupe_index_filter_bytes')).toBeGreaterThan(0);
      expect(value('tributary_dedupe_index_store_bytes')).toBeGreaterThan(0);
      expect(value('tributary_dedupe_index_catch_up_lag_seconds')).toBe(0);
      expect(value('tributary_dedupe_index_ready')).toBe(1);
      // Its own appends are indexed from their acknowledgements: it never read the log back.
      expect(value('tributary_dedupe_index_following')).toBe(0);
      expect(text).toMatch(/^tributary_dedupe_index_bucket_ids\{bucket="[0-9T:.-]+Z"\} 3$/m);
      expect(text).toMatch(/^tributary_dedupe_index_bucket_runs\{bucket="[0-9T:.-]+Z"\} [01]$/m);
      // A registry without an index (sqlite log, DEDUPE_INDEX=off) gets no dedupe metrics.
      const plain = new Registry();
      registerDedupeIndexMetrics(plain, inner);
      expect(await plain.metrics()).not.toContain('tributary_dedupe_index');
    } finally {
      await log.close();
    }
  }, 30_000);
});
