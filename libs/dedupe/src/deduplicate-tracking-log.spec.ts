import { createEventLog, type TrackingLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEDUPE_INDEX_FILE_NAME, deduplicateTrackingLog } from './deduplicate-tracking-log';

describe('deduplicateTrackingLog', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-deduplicate-tracking-log-'));
  });

  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The log as a tracking API process opens it: JetStream with the guard window, the index in front. */
  async function openIndexedLog(natsUrl: string): Promise<TrackingLog> {
    const log = await createEventLog({ dataDir, natsUrl, dedupeIndex: true });
    try {
      return await deduplicateTrackingLog(log, {
        natsUrl,
        windowMs: 24 * 60 * 60 * 1000,
        guardWindowMs: 2 * 60_000,
        indexDir: dataDir,
      });
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  it('gives a second tracking process in the same data directory its own dedupe index file', async () => {
    const server = await NatsServerProcess.start();
    const logs: TrackingLog[] = [];
    try {
      for (let process = 0; process < 2; process += 1) {
        logs.push(await openIndexedLog(server.url));
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
    let log: TrackingLog | undefined;
    try {
      writeFileSync(join(dataDir, DEDUPE_INDEX_FILE_NAME), Buffer.alloc(8192, 'not a database '));
      log = await openIndexedLog(server.url);
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
});
