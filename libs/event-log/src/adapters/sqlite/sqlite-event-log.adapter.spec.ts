import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep, waitUntil } from '../../event-log.contract';
import type { Delivery, EventLog } from '../../event-log.port';
import { SqliteEventLog } from './sqlite-event-log.adapter';

/** Behaviour of the embedded adapter that the shared contract cannot see. */
describe('SqliteEventLog', () => {
  const settings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };
  let directory: string;
  const logs: EventLog[] = [];

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-sqlite-event-log-'));
  });

  afterEach(async () => {
    await Promise.allSettled(logs.splice(0).map((log) => log.close()));
    rmSync(directory, { recursive: true, force: true });
  });

  async function open(options: { pollIntervalMs?: number } = {}): Promise<SqliteEventLog> {
    const log = await SqliteEventLog.open({
      ...settings,
      file: join(directory, 'event-log.sqlite'),
      ...options,
    });
    logs.push(log);
    return log;
  }

  it('lets idle consumers sleep instead of claiming in a loop', async () => {
    const log = await open();
    // The runners claim through the consumers part of the log.
    const claim = jest.spyOn(log['consumers'], 'claimDeliveries');
    await log.consume('first', { ackWaitMs: 1000, maxInFlight: 10 }, (delivery) => delivery.ack());
    await log.consume('second', { ackWaitMs: 1000, maxInFlight: 10 }, (delivery) => delivery.ack());
    await log.publishBatch([{ workspaceId: 'ws', sourceId: 'src', messageId: 'm1', payload: {} }]);
    await sleep(200);
    const claimsBeforeIdle = claim.mock.calls.length;
    await sleep(1000);
    // At most one poll per consumer per second while nothing happens.
    expect(claim.mock.calls.length - claimsBeforeIdle).toBeLessThanOrEqual(4);
  });

  it('delivers messages written by another process on the same file, through polling', async () => {
    const routerSide = await open({ pollIntervalMs: 200 });
    const ingestSide = await open();
    const received: Delivery[] = [];
    await routerSide.consume('destination-1', { ackWaitMs: 1000, maxInFlight: 10 }, async (delivery) => {
      received.push(delivery);
      await delivery.ack();
    });
    await ingestSide.publishBatch([
      { workspaceId: 'ws', sourceId: 'src', messageId: 'from-elsewhere', payload: { a: 1 } },
    ]);
    await waitUntil('the other instance delivers it', () => received.length === 1, 3000);
    expect(received[0].messageId).toBe('from-elsewhere');
    expect(received[0].payload).toEqual({ a: 1 });
  });

  it('refuses a second consume of the same consumer in one process', async () => {
    const log = await open();
    const subscription = await log.consume('single', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined);
    await expect(log.consume('single', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined)).rejects.toThrow(
      /already being consumed/,
    );
    await subscription.stop();
    const again = await log.consume('single', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined);
    await again.stop();
  });

  it('keeps stored messages and dedupe ids across a reopen', async () => {
    const first = await open();
    const [stored] = await first.publishBatch([
      { workspaceId: 'ws', sourceId: 'src', messageId: 'kept', payload: {} },
    ]);
    await first.close();
    const second = await open();
    const [again] = await second.publishBatch([
      { workspaceId: 'ws', sourceId: 'src', messageId: 'kept', payload: {} },
    ]);
    expect(again).toEqual({ messageId: 'kept', duplicate: true, sequence: stored.sequence });
  });
});
