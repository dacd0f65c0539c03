/**
 * What the measures that read the bench's messages back share (`consume-ack.measure.ts`,
 * `replay-floor.measure.ts`): a nats-server of their own, the tracking log on it (no dedupe index),
 * and `total` bench messages of the source `measure` stored once, as Tributary stores them. Everything
 * is closed and removed after `use`, whatever it does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventLog, type EventLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { createBenchMessages, type BenchMessages } from './bench-messages';

export const MEASURE_SOURCE = 'measure';
const BATCH = 100;

export interface StoredMessages {
  nats: NatsServerProcess;
  log: EventLog;
  messages: BenchMessages;
}

export async function withStoredMessages(
  total: number,
  use: (stored: StoredMessages) => Promise<void>,
): Promise<void> {
  const nats = await NatsServerProcess.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'tributary-measure-'));
  const log = await createEventLog({ natsUrl: nats.url, dataDir, dedupeIndex: false });
  try {
    const messages = createBenchMessages(MEASURE_SOURCE);
    for (let stored = 0; stored < total; stored += BATCH) {
      const { messageIds, payloads } = messages.storedBatch(Math.min(BATCH, total - stored));
      const outcomes = await log.publishBatch(
        payloads.map((payload, index) => ({
          workspaceId: 'bench',
          sourceId: MEASURE_SOURCE,
          messageId: messageIds[index]!,
          payload: JSON.parse(payload) as Record<string, unknown>,
        })),
      );
      if (outcomes.some((outcome) => outcome.duplicate)) throw new Error('a fresh messageId was a duplicate');
    }
    await use({ nats, log, messages });
  } finally {
    await log.close();
    await nats.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
