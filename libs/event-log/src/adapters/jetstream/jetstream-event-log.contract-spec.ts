import { AckPolicy, DeliverPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describeEventLogContract, sleep, waitUntil } from '../../event-log.contract';
import {
  EventLogUnavailableError,
  type ConsumerSubscription,
  type Delivery,
  type EventLogSettings,
} from '../../event-log.port';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { withNatsServer } from '../../testing/nats-server.kit';
import { ATTEMPT_STREAM } from './attempt-history';
import {
  DEAD_LETTER_STREAM,
  JetStreamEventLog,
  LEASE_STREAM,
  TRACKING_STREAM,
} from './jetstream-event-log.adapter';

const nats = withNatsServer();

function connectLog(
  settings: EventLogSettings,
  overrides: { publishTimeoutMs?: number } = {},
): Promise<JetStreamEventLog> {
  return JetStreamEventLog.connect({
    ...settings,
    servers: nats.server.url,
    reconnectWaitMs: 250,
    ...overrides,
  });
}

describeEventLogContract('jetstream', () => ({
  async newStore(settings) {
    await nats.deleteStreams();
    return { open: () => connectLog(settings), dispose: async () => undefined };
  },
}));

describe('JetStreamEventLog when the server goes away', () => {
  const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

  it('fails publishes fast with EventLogUnavailableError, then recovers by itself after a restart', async () => {
    await nats.deleteStreams();
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

      await nats.server.stop();
      const startedAt = Date.now();
      await expect(
        log.publishBatch([
          { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'during-outage', payload: {} },
        ]),
      ).rejects.toThrow(EventLogUnavailableError);
      expect(Date.now() - startedAt).toBeLessThan(2000);
      expect(await log.ping()).toBe(false);

      await nats.server.restart();
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
      if (!nats.server.running) await nats.server.restart();
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

describe('JetStreamEventLog consumers that start at a time', () => {
  const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

  async function withManager<T>(work: (manager: JetStreamManager) => Promise<T>): Promise<T> {
    const connection = await connect({ servers: nats.server.url });
    try {
      return await work(await jetstreamManager(connection));
    } finally {
      await connection.close();
    }
  }

  it('starts one at the sequence of the first message stored at or after the time, leaving no probe behind', async () => {
    await nats.deleteStreams();
    const log = await connectLog(settings);
    const subscriptions: ConsumerSubscription[] = [];
    try {
      await log.publishBatch([{ workspaceId: 'ws1', sourceId: 'src-a', messageId: 'before', payload: {} }]);
      await sleep(20);
      const deliverFrom = new Date();
      await sleep(20);
      const [after] = await log.publishBatch([
        { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'after', payload: {} },
      ]);
      const received: string[] = [];
      subscriptions.push(
        await log.consume(
          'from-a-time',
          { deliverFrom, ackWaitMs: 5000, maxInFlight: 2 },
          async (delivery) => {
            received.push(delivery.messageId);
            await delivery.ack();
          },
        ),
      );
      // A time later than every message: the consumer starts at the next one stored.
      subscriptions.push(
        await log.consume(
          'from-later',
          { deliverFrom: new Date(Date.now() + 60_000), ackWaitMs: 5000, maxInFlight: 2 },
          () => Promise.resolve(),
        ),
      );
      await waitUntil('the message stored after the time', () => received.length >= 1);
      const configs = await withManager(async (manager) => {
        const all: Record<string, { deliver_policy: string; opt_start_seq?: number }> = {};
        for await (const info of manager.consumers.list(TRACKING_STREAM)) all[info.name] = info.config;
        return all;
      });
      expect(Object.keys(configs).sort()).toEqual(['from-a-time', 'from-later']);
      expect(configs['from-a-time']).toMatchObject({
        deliver_policy: 'by_start_sequence',
        opt_start_seq: after.sequence,
      });
      expect(configs['from-later']).toMatchObject({
        deliver_policy: 'by_start_sequence',
        opt_start_seq: after.sequence + 1,
      });
      await sleep(200);
      expect(received).toEqual(['after']);
    } finally {
      for (const subscription of subscriptions) await subscription.stop();
      await log.close();
    }
  });

  it('consumes one made to start at the time itself (as earlier versions made them), with new settings where the server allows', async () => {
    await nats.deleteStreams();
    const notices: string[] = [];
    const log = await JetStreamEventLog.connect({
      ...settings,
      servers: nats.server.url,
      notice: (message) => notices.push(message),
    });
    try {
      await withManager((manager) =>
        manager.consumers.add(TRACKING_STREAM, {
          durable_name: 'made-earlier',
          filter_subject: 'tracking.*.src-a',
          ack_policy: AckPolicy.Explicit,
          ack_wait: 5_000_000_000,
          max_ack_pending: 1,
          max_deliver: -1,
          deliver_policy: DeliverPolicy.StartTime,
          opt_start_time: new Date(Date.now() - 60_000).toISOString(),
        }),
      );
      const received: string[] = [];
      const subscription = await log.consume(
        'made-earlier',
        { sourceId: 'src-a', deliverFrom: new Date(0), ackWaitMs: 8000, maxInFlight: 4 },
        async (delivery) => {
          received.push(delivery.messageId);
          await delivery.ack();
        },
      );
      await log.publishBatch([
        { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'one', payload: {} },
        { workspaceId: 'ws1', sourceId: 'src-a', messageId: 'two', payload: {} },
      ]);
      await waitUntil('both messages', () => received.length >= 2);
      await subscription.stop();
      const maxAckPending = await withManager(
        async (manager) =>
          (await manager.consumers.info(TRACKING_STREAM, 'made-earlier')).config.max_ack_pending,
      );
      // nats-server 2.9 refuses the update and the router says so; 2.10 and later take it.
      if (maxAckPending === 1) {
        expect(notices).toContain(
          'consumer made-earlier: keeps ack_wait 5000 ms and max_ack_pending 1; this NATS server cannot update a consumer that starts at a time (2.10 can)',
        );
      } else expect(maxAckPending).toBe(4);
    } finally {
      await log.close();
    }
  });
});

describe('JetStreamEventLog stream replicas (NATS_STREAM_REPLICAS)', () => {
  const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };
  const STREAMS = [TRACKING_STREAM, DEAD_LETTER_STREAM, LEASE_STREAM, ATTEMPT_STREAM];

  async function replicasOfStreams(servers: string): Promise<Record<string, number>> {
    const connection = await connect({ servers: servers.split(',') });
    try {
      const manager = await jetstreamManager(connection);
      const replicas: Record<string, number> = {};
      for (const stream of STREAMS)
        replicas[stream] = (await manager.streams.info(stream)).config.num_replicas;
      return replicas;
    } finally {
      await connection.close();
    }
  }

  const all = (replicas: number) => Object.fromEntries(STREAMS.map((stream) => [stream, replicas]));

  it('creates its streams with one replica by default, and refuses more than one server can hold', async () => {
    await nats.deleteStreams();
    await (await connectLog(settings)).close();
    expect(await replicasOfStreams(nats.server.url)).toEqual(all(1));
    // Three replicas on a single server fail at start, saying why, and leave the streams as they were
    // (the server itself would accept raising an existing stream, yet keep one copy).
    const onSingleServer = { ...settings, servers: nats.server.url, replicas: 3 };
    await expect(JetStreamEventLog.connect(onSingleServer)).rejects.toThrow(
      /NATS_STREAM_REPLICAS is 3.*not part of a JetStream cluster/,
    );
    expect(await replicasOfStreams(nats.server.url)).toEqual(all(1));
    await nats.deleteStreams();
    await expect(JetStreamEventLog.connect(onSingleServer)).rejects.toThrow(/NATS_STREAM_REPLICAS is 3/);
    await expect(JetStreamEventLog.connect({ ...onSingleServer, replicas: 0 })).rejects.toThrow(RangeError);
  });

  it('on a three-server cluster, replicates the streams, moves existing ones, and survives the loss of a server', async () => {
    const cluster = await NatsServerProcess.startCluster(3);
    const servers = cluster.map((member) => member.url).join(',');
    // The cluster elects its JetStream leader a moment after the servers are up.
    const notices: string[] = [];
    async function connectWhenReady(replicas: number): Promise<JetStreamEventLog> {
      let log: JetStreamEventLog | undefined;
      await waitUntil(
        `JetStream answers on the cluster (R${replicas})`,
        async () => {
          try {
            log = await JetStreamEventLog.connect({
              ...settings,
              servers,
              replicas,
              reconnectWaitMs: 250,
              notice: (message) => notices.push(message),
            });
            return true;
          } catch (error) {
            if (!(error instanceof EventLogUnavailableError)) throw error;
            return false;
          }
        },
        30_000,
      );
      return log!;
    }
    try {
      // Started with one replica, as a deployment made before NATS_STREAM_REPLICAS was raised...
      const single = await connectWhenReady(1);
      const [stored] = await single.publishBatch([
        { workspaceId: 'ws1', sourceId: 'src-r', messageId: 'before-r3', payload: { n: 1 } },
      ]);
      await single.close();
      expect(await replicasOfStreams(servers)).toEqual(all(1));
      expect(notices).toEqual([]);

      // ...then restarted with 3: the streams move to three replicas and keep their messages.
      const replicated = await connectWhenReady(3);
      try {
        expect(await replicasOfStreams(servers)).toEqual(all(3));
        // Each stream raised is said once, with its old and new replica count.
        for (const stream of STREAMS) {
          expect(notices).toContain(`stream ${stream}: replicas 1 -> 3 (NATS_STREAM_REPLICAS)`);
        }
        expect(await replicated.writeLease('replay_rp_r3', { holder: 'a', data: {} }, 0)).toEqual(
          expect.any(Number),
        );

        // One server of three goes away: the log keeps working and has lost nothing.
        await cluster[2].stop();
        let afterLoss = stored;
        await waitUntil(
          'a publish succeeds with one server down',
          async () => {
            try {
              [afterLoss] = await replicated.publishBatch([
                { workspaceId: 'ws1', sourceId: 'src-r', messageId: 'after-loss', payload: { n: 2 } },
              ]);
              return true;
            } catch (error) {
              if (!(error instanceof EventLogUnavailableError)) throw error;
              return false;
            }
          },
          30_000,
        );
        expect(afterLoss.sequence).toBeGreaterThan(stored.sequence);
        const received: string[] = [];
        let subscription: ConsumerSubscription | undefined;
        // The consumer's own leader is elected too after the loss (slower on a busy machine).
        await waitUntil(
          'a consumer can be created with one server down',
          async () => {
            try {
              subscription = await replicated.consume(
                'r3-reader',
                { sourceId: 'src-r', deliverFrom: new Date(0), ackWaitMs: 5_000, maxInFlight: 10 },
                async (delivery) => {
                  received.push(delivery.messageId);
                  await delivery.ack();
                },
              );
              return true;
            } catch (error) {
              if (!(error instanceof EventLogUnavailableError)) throw error;
              return false;
            }
          },
          30_000,
        );
        // A pull sent while the consumer's leader was still settling is issued again once its
        // heartbeats are missed (within the 5 s pull expiry), not after the client's 30 s.
        await waitUntil('both messages are read back', () => received.length >= 2, 15_000);
        await subscription!.stop();
        expect(received).toEqual(['before-r3', 'after-loss']);
        expect((await replicated.readLease('replay_rp_r3'))?.holder).toBe('a');
      } finally {
        await replicated.close();
      }
    } finally {
      await Promise.all(cluster.map((member) => member.dispose()));
    }
  }, 180_000);
});

describe('JetStreamEventLog across an election of the ATTEMPTS leader', () => {
  // Every message redelivered after a NATS node's loss reads its attempt history first, and records its
  // start. What is sent while ATTEMPTS has no leader is never answered, and a failure leaves the
  // message for its ack wait: so reads and writes are sent again (short tries) until the new leader
  // answers them.
  it('answers a read and a write of the attempts sent during the election, once the new leader is elected', async () => {
    const cluster = await NatsServerProcess.startCluster(3);
    const admin = await connect({ servers: cluster.map((member) => member.url), noAsyncTraces: true });
    try {
      const manager = await jetstreamManager(admin, { timeout: 2_000, checkAPI: false });
      // The log talks to server 0 only, so that what it sends keeps reaching a live server.
      let log: JetStreamEventLog | undefined;
      await waitUntil(
        'JetStream answers on the cluster',
        async () => {
          log = await JetStreamEventLog.connect({
            dedupeWindowMs: 60_000,
            retentionMs: 3_600_000,
            servers: cluster[0].url,
            replicas: 3,
          }).catch((error: unknown) => {
            if (error instanceof EventLogUnavailableError) return undefined;
            throw error;
          });
          return log !== undefined;
        },
        30_000,
      );
      try {
        const failed = { at: new Date('2026-11-28T09:00:00Z'), outcome: 'HTTP 500', deliveryCount: 1 };
        await log!.recordFailedAttempt('elected', 7, failed);
        // The leader of ATTEMPTS moved off server 0, then killed.
        const leaderIndex = async () => {
          const leader = (await manager.streams.info(ATTEMPT_STREAM)).cluster?.leader;
          return cluster.findIndex((_, index) => leader === `tributary-test-${index}`);
        };
        let leader = -1;
        await waitUntil(
          'ATTEMPTS is led by another server than 0',
          async () => {
            leader = await leaderIndex().catch(() => -1);
            if (leader > 0) return true;
            await admin
              .request(`$JS.API.STREAM.LEADER.STEPDOWN.${ATTEMPT_STREAM}`, '', { timeout: 2_000 })
              .catch(() => undefined);
            return false;
          },
          30_000,
        );
        await cluster[leader].kill();
        // Sent once the survivors noticed nothing yet, inside the 4-9 s before they elect another.
        await sleep(2_000);
        // The next delivery records its start and its failure meanwhile, as a redelivered message does.
        const [read, started] = await Promise.all([
          log!.readFailedAttempts('elected', 7),
          log!.recordAttemptStarted('elected', 7, { at: new Date('2026-11-28T09:00:05Z'), deliveryCount: 2 }),
        ]);
        expect(read).toMatchObject({ attempts: [{ outcome: 'HTTP 500', deliveryCount: 1 }] });
        expect(started.attempts).toHaveLength(2);
        await log!.recordFailedAttempt('elected', 7, {
          at: new Date('2026-11-28T09:00:06Z'),
          outcome: 'HTTP 502',
          deliveryCount: 2,
        });
        await expect(log!.readFailedAttempts('elected', 7)).resolves.toMatchObject({
          attempts: [
            { outcome: 'HTTP 500', deliveryCount: 1 },
            { outcome: 'HTTP 502', deliveryCount: 2 },
          ],
        });
      } finally {
        await log?.close();
      }
    } finally {
      await admin.close();
      await Promise.all(cluster.map((member) => member.dispose()));
    }
  }, 90_000);
});
