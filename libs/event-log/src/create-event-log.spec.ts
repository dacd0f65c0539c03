import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.adapter';
import { DEDUPE_INDEX_FILE_NAME, SQLITE_EVENT_LOG_FILE_NAME, createEventLog } from './create-event-log';
import { EventLogUnavailableError, type EventLog } from './event-log.port';
import { NatsServerProcess } from './testing/nats-server.process';

describe('createEventLog', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-create-event-log-'));
  });

  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('opens the embedded sqlite log under the data directory when no NATS URL is set', async () => {
    const log = await createEventLog({ dataDir });
    try {
      expect(log).toBeInstanceOf(SqliteEventLog);
      expect(existsSync(join(dataDir, SQLITE_EVENT_LOG_FILE_NAME))).toBe(true);
      const [outcome] = await log.publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} },
      ]);
      expect(outcome).toEqual({ messageId: 'm1', duplicate: false, sequence: 1 });
    } finally {
      await log.close();
    }
  });

  it('refuses a dedupe window longer than the retention', async () => {
    await expect(createEventLog({ dataDir, dedupeWindowMs: 2000, retentionMs: 1000 })).rejects.toThrow(
      RangeError,
    );
    await expect(createEventLog({ dataDir, dedupeWindowMs: 0 })).rejects.toThrow(RangeError);
  });

  it('gives a second tracking process in the same data directory its own dedupe index file', async () => {
    const server = await NatsServerProcess.start();
    const logs: EventLog[] = [];
    try {
      for (let process = 0; process < 2; process += 1) {
        logs.push(await createEventLog({ dataDir, natsUrl: server.url, dedupeIndex: true }));
      }
      expect(existsSync(join(dataDir, DEDUPE_INDEX_FILE_NAME))).toBe(true);
      expect(existsSync(join(dataDir, 'dedupe-index.2.sqlite'))).toBe(true);
      const [stored] = await logs[0].publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} },
      ]);
      const [again] = await logs[1].publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} },
      ]);
      expect(again).toEqual({ messageId: 'm1', duplicate: true, sequence: stored.sequence });
    } finally {
      for (const log of logs) await log.close();
      await server.dispose();
    }
  }, 30_000);

  it('moves a dedupe index file it cannot read aside and rebuilds the index, instead of failing to start', async () => {
    const server = await NatsServerProcess.start();
    let log: EventLog | undefined;
    try {
      writeFileSync(join(dataDir, DEDUPE_INDEX_FILE_NAME), Buffer.alloc(8192, 'not a database '));
      log = await createEventLog({ dataDir, natsUrl: server.url, dedupeIndex: true });
      const asides = readdirSync(dataDir).filter((name) =>
        name.startsWith(`${DEDUPE_INDEX_FILE_NAME}.corrupt-`),
      );
      expect(asides).toHaveLength(1);
      const [stored] = await log.publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} },
      ]);
      const [again] = await log.publishBatch([
        { workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} },
      ]);
      expect(again).toEqual({ messageId: 'm1', duplicate: true, sequence: stored.sequence });
    } finally {
      await log?.close();
      await server.dispose();
    }
  }, 30_000);

  it('uses JetStream when a NATS URL is set, failing with EventLogUnavailableError when nothing answers', async () => {
    await expect(createEventLog({ dataDir, natsUrl: 'nats://127.0.0.1:1' })).rejects.toThrow(
      EventLogUnavailableError,
    );
  });
});
