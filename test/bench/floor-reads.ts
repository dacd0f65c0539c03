/**
 * What the floors' routers share (`replay-floor.consumer.ts`, `postgres-floor.consumer.ts`): the
 * project's event log on the bench's nats-server, and a read of a source's stored messages on a
 * consumer of its own, each acked, unconfirmed, as a destination's consumer acks, once the floor's work
 * for it is done.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventLog, type Delivery, type EventLog } from '@tributary/event-log';

/** The required environment variables, or an error naming those missing. */
export function requiredEnvironment<Name extends string>(names: readonly Name[]): Record<Name, string> {
  const missing = names.filter((name) => !process.env[name]);
  if (missing.length > 0) throw new Error(`${missing.join(', ')} required`);
  return Object.fromEntries(names.map((name) => [name, process.env[name]!])) as Record<Name, string>;
}

/** An event log of its own (no dedupe index: it only reads), closed and removed after `use`. */
export async function withFloorLog(natsUrl: string, use: (log: EventLog) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tributary-floor-'));
  const log = await createEventLog({ natsUrl, dataDir, dedupeIndex: false });
  try {
    await use(log);
  } finally {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Reads the source's messages from `from` on the consumer `consumer` until `messages` are acked, then
 * stops and deletes it. Each is acked once `work` resolves for it; the read fails when `work` rejects.
 * Resolves with the seconds from the start to the last ack.
 */
export async function readAll(
  log: EventLog,
  consumer: string,
  options: { sourceId: string; from: Date; messages: number; inFlight: number },
  work: (delivery: Delivery) => Promise<void>,
): Promise<number> {
  let acked = 0;
  let finished!: () => void;
  let failed!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const startedAt = performance.now();
  const subscription = await log.consume(
    consumer,
    {
      sourceId: options.sourceId,
      deliverFrom: options.from,
      ackWaitMs: 30_000,
      maxInFlight: options.inFlight,
      confirmAcks: false,
    },
    async (delivery) => {
      try {
        await work(delivery);
      } catch (error) {
        failed(error);
        return;
      }
      await delivery.ack();
      acked += 1;
      if (acked === options.messages) finished();
    },
  );
  try {
    await done;
    return (performance.now() - startedAt) / 1000;
  } finally {
    await subscription.stop();
    await log.deleteConsumer(consumer);
  }
}
