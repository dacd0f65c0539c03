import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describeEventLogContract, sleep, waitUntil } from '../../event-log.contract';
import { EventLogUnavailableError, type Delivery, type EventLogSettings } from '../../event-log.port';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { DEAD_LETTER_STREAM, JetStreamEventLog, TRACKING_STREAM } from './jetstream-event-log.adapter';

let server: NatsServerProcess;

beforeAll(async () => {
  server = await NatsServerProcess.start();
});

afterAll(async () => {
  await server?.dispose();
});

/** Drops both streams (and so every consumer): each contract test starts from an empty log. */
async function deleteStreams(): Promise<void> {
  const connection = await connect({ servers: server.url });
  try {
    const manager = await jetstreamManager(connection);
    for (const stream of [TRACKING_STREAM, DEAD_LETTER_STREAM]) {
      await manager.streams.delete(stream).catch(() => false);
    }
  } finally {
    await connection.close();
  }
}

function connectLog(
  settings: EventLogSettings,
  overrides: { publishTimeoutMs?: number } = {},
): Promise<JetStreamEventLog> {
  return JetStreamEventLog.connect({ ...settings, servers: server.url, reconnectWaitMs: 250, ...overrides });
}

describeEventLogContract('jetstream', () => ({
  async newStore(settings) {
    await deleteStreams();
    return { open: () => connectLog(settings), dispose: async () => undefined };
  },
}));

describe('JetStreamEventLog when the server goes away', () => {
  const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

  it('fails publishes fast with EventLogUnavailableError, then recovers by itself after a restart', async () => {
    await deleteStreams();
    const log = await connectLog(settings, { publishTimeoutMs: 1000 });
    const received: Delivery[] = [];
    const subscription = await log.consume(
      'survivor',
      { ackWaitMs: 2000, maxInFlight: 10 },
      async (delivery) => {
        received.push(delivery);
        await delivery.ack();
      },
    );
    try {
      const [before] = await log.publishBatch([
        { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'before-outage', payload: {} },
      ]);
      await waitUntil('the first message is consumed', () => received.length >= 1);

      await server.stop();
      const startedAt = Date.now();
      await expect(
        log.publishBatch([
          { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'during-outage', payload: {} },
        ]),
      ).rejects.toThrow(EventLogUnavailableError);
      expect(Date.now() - startedAt).toBeLessThan(2000);
      expect(await log.ping()).toBe(false);

      await server.restart();
      let afterOutage = before;
      await waitUntil(
        'a publish succeeds again on the same adapter',
        async () => {
          try {
            [afterOutage] = await log.publishBatch([
              { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'after-outage', payload: { n: 1 } },
            ]);
            return true;
          } catch (error) {
            if (!(error instanceof EventLogUnavailableError)) throw error;
            return false;
          }
        },
        15_000,
      );
      expect(afterOutage.sequence).toBeGreaterThan(before.sequence);
      expect(await log.ping()).toBe(true);
      await waitUntil(
        'the running consumer receives the message published after the restart',
        () => received.some((delivery) => delivery.messageId === 'after-outage'),
        15_000,
      );
      // The message stored before the outage survived the restart and was not delivered again.
      await sleep(200);
      expect(received.filter((delivery) => delivery.messageId === 'before-outage')).toHaveLength(1);
    } finally {
      if (!server.running) await server.restart();
      await subscription.stop();
      await log.close();
    }
  }, 40_000);

  it('refuses to start with EventLogUnavailableError when no server answers', async () => {
    const unreachable = JetStreamEventLog.connect({
      ...settings,
      servers: 'nats://127.0.0.1:1',
      requestTimeoutMs: 1000,
    });
    await expect(unreachable).rejects.toThrow(EventLogUnavailableError);
  });
});
