import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEAD_LETTER_STREAM,
  JetStreamEventLog,
  LEASE_STREAM,
  TRACKING_STREAM,
} from '../adapters/jetstream/jetstream-event-log.adapter';
import { JetStreamMessageIdFeed } from '../adapters/jetstream/jetstream-message-id.feed';
import { SqliteEventLog } from '../adapters/sqlite/sqlite-event-log.adapter';
import type { EventLog } from '../event-log.port';
import { NatsServerProcess } from '../testing/nats-server.process';
import { DeduplicatedEventLog } from './deduplicated-event-log';
import { describeDeduplicatingLogContract } from './deduplicating-log.contract';
import { WorkerDedupeIndex } from './worker-dedupe-index.adapter';

const WINDOW_MS = 3_000;
const BUCKET_MS = 500;
const GUARD_MS = 600;

let server: NatsServerProcess;

beforeAll(async () => {
  server = await NatsServerProcess.start();
});

afterAll(async () => {
  await server?.dispose();
});

async function deleteStreams(): Promise<void> {
  const connection = await connect({ servers: server.url });
  try {
    const manager = await jetstreamManager(connection);
    for (const stream of [TRACKING_STREAM, DEAD_LETTER_STREAM, LEASE_STREAM]) {
      await manager.streams.delete(stream).catch(() => false);
    }
  } finally {
    await connection.close();
  }
}

/** Every id in TRACKING, read back with the same headers-only feed the index follows. */
export async function storedMessageIdsOnNats(servers: string): Promise<string[]> {
  const feed = await JetStreamMessageIdFeed.connect(servers);
  try {
    const { lastSequence } = await feed.describe();
    if (lastSequence === 0) return [];
    const messageIds: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const subscription = await feed.follow({ fromSequence: 1 }, async (batch) => {
      messageIds.push(...batch.messageIds);
      if (batch.sequences[batch.sequences.length - 1] >= lastSequence) done();
    });
    await finished;
    await subscription.stop();
    return messageIds;
  } finally {
    await feed.close();
  }
}

describeDeduplicatingLogContract(
  'jetstream with the dedupe index (guard window shorter than the window)',
  () => ({
    timing: { windowMs: WINDOW_MS, guardWindowMs: GUARD_MS, forgottenAfterMs: WINDOW_MS + BUCKET_MS + 500 },
    async open() {
      await deleteStreams();
      const inner = await JetStreamEventLog.connect({
        servers: server.url,
        dedupeWindowMs: WINDOW_MS,
        retentionMs: 3_600_000,
        trackingDuplicateWindowMs: GUARD_MS,
      });
      const index = await WorkerDedupeIndex.start(
        join(mkdtempSync(join(tmpdir(), 'dedupe-log-')), 'index.sqlite'),
        {
          windowMs: WINDOW_MS,
          bucketMs: BUCKET_MS,
        },
      );
      const feed = await JetStreamMessageIdFeed.connect(server.url);
      const log = await DeduplicatedEventLog.start(inner, index, feed, {
        guardWindowMs: GUARD_MS,
        windowMs: WINDOW_MS,
      });
      await log.whenCaughtUp();
      return log;
    },
    storedMessageIds: () => storedMessageIdsOnNats(server.url),
    settled: (log: EventLog) => (log as DeduplicatedEventLog).whenIndexed(),
  }),
);

describe('the JetStream guard window', () => {
  it('is the TRACKING stream duplicate window, while dead letters keep the whole window', async () => {
    await deleteStreams();
    const log = await JetStreamEventLog.connect({
      servers: server.url,
      dedupeWindowMs: WINDOW_MS,
      retentionMs: 3_600_000,
      trackingDuplicateWindowMs: GUARD_MS,
    });
    const connection = await connect({ servers: server.url });
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
    const database = new BetterSqlite3(sqliteFile, { readonly: true });
    try {
      return database.prepare('SELECT message_id FROM messages ORDER BY sequence').pluck().all() as string[];
    } finally {
      database.close();
    }
  },
  settled: async () => undefined,
}));
