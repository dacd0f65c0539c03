import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.adapter';
import { SQLITE_EVENT_LOG_FILE_NAME, createEventLog } from './create-event-log';
import { EventLogUnavailableError } from './event-log.port';

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

  it('uses JetStream when a NATS URL is set, failing with EventLogUnavailableError when nothing answers', async () => {
    await expect(createEventLog({ dataDir, natsUrl: 'nats://127.0.0.1:1' })).rejects.toThrow(
      EventLogUnavailableError,
    );
  });
});
