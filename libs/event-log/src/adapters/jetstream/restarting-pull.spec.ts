import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { pullSettings, RestartingPull, type PullWatch } from './restarting-pull';

async function waitUntil(what: string, condition: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

describe('RestartingPull', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url, noAsyncTraces: true });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  /**
   * Stream `name` (subjects `<name in lower case>.>`) and its durable `reader`, pulled by a
   * RestartingPull that acknowledges and keeps what it reads, and keeps what it tells.
   */
  async function startReader(name: string, expiresMs: number, watch: PullWatch = {}, on = connection) {
    const manager = await jetstreamManager(on);
    await manager.streams.add({ name, subjects: [`${name.toLowerCase()}.>`] });
    const durable = { durable_name: 'reader', ack_policy: AckPolicy.Explicit };
    await manager.consumers.add(name, durable);
    const client = jetstream(on);
    const received: string[] = [];
    const notices: string[] = [];
    const pull = await RestartingPull.start(
      await client.consumers.get(name, 'reader'),
      {
        max_messages: 10,
        callback: (message: JsMsg) => {
          received.push(message.string());
          message.ack();
        },
      },
      on,
      expiresMs,
      { ...watch, notice: (message) => notices.push(message) },
    );
    return { manager, client, durable, received, notices, pull };
  }

  it('pulls with the expiry asked for and a heartbeat at half of it, never under the client minimums', () => {
    expect(pullSettings(5_000)).toEqual({ expires: 5_000, idle_heartbeat: 2_500 });
    expect(pullSettings(30_000)).toEqual({ expires: 30_000, idle_heartbeat: 15_000 });
    expect(pullSettings(1_000)).toEqual({ expires: 1_000, idle_heartbeat: 500 });
  });

  // The consumer is deleted and made again under its name, as after a consumer leader's loss: the
  // pull in flight is gone, and nothing answers it any more. Its heartbeats stop, so the pull is
  // issued again within two heartbeats (one expiry), whatever the client's own recovery does.
  it('issues its pull again once the pull in flight stops beating, and gets the next messages', async () => {
    const { manager, client, durable, received, notices, pull } = await startReader('PULLS', 2_000);
    try {
      await client.publish('pulls.one', 'before');
      await waitUntil('the first message arrives', () => received.includes('before'), 5_000);

      await manager.consumers.delete('PULLS', 'reader');
      await manager.consumers.add('PULLS', durable);
      await client.publish('pulls.one', 'after');
      const elapsedMs = await waitUntil(
        'the message after the new consumer arrives',
        () => received.includes('after'),
        10_000,
      );
      expect(elapsedMs).toBeLessThan(5_000);
      expect(pull.restartCount).toBeGreaterThanOrEqual(1);
      // The operator hears of the outage twice, however many pulls it took: at the loss and at the end.
      expect(notices).toHaveLength(2);
      expect(notices[0]).toMatch(
        /^the pull was lost \((heartbeats_missed|consumer_deleted|consumer_not_found)\); issuing it again$/,
      );
      expect(notices[1]).toMatch(
        new RegExp(
          `^messages arrive again, \\d+\\.\\d s after the pull was lost \\(pulls issued again: ${pull.restartCount}\\)$`,
        ),
      );
    } finally {
      await pull.close();
    }
  }, 30_000);

  // A new consumer leader holds none of the pulls sent before its election, and a pull sent while
  // there was no leader is never answered: the leader's advisory has the pull issued again at once,
  // not after its heartbeats are missed. One server elects no leader: the test publishes the
  // advisory as a cluster's new leader would.
  it('issues its pull again at once when its consumer elects a leader', async () => {
    const leaderElected = '$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.ELECTED.reader';
    // Heartbeats every 5 s: missing two takes 10 s, longer than the test waits.
    const { client, received, notices, pull } = await startReader('ELECTED', 10_000, { leaderElected });
    try {
      await client.publish('elected.one', 'before');
      await waitUntil('the first message arrives', () => received.includes('before'), 5_000);
      connection.publish(
        leaderElected,
        JSON.stringify({ type: 'io.nats.jetstream.advisory.v1.consumer_leader_elected' }),
      );
      await waitUntil('the pull is issued again', () => pull.restartCount >= 1, 5_000);
      await client.publish('elected.one', 'after');
      await waitUntil('the message after the election arrives', () => received.includes('after'), 5_000);
      expect(notices[0]).toBe('the pull was lost (its consumer elected a leader); issuing it again');
      expect(notices[1]).toMatch(
        /^messages arrive again, \d+\.\d s after the pull was lost \(pulls issued again: 1\)$/,
      );
    } finally {
      await pull.close();
    }
  }, 30_000);

  it('stops pulling once closed: a message published after close stays with the consumer', async () => {
    const manager = await jetstreamManager(connection);
    await manager.streams.add({ name: 'CLOSED', subjects: ['closed.>'] });
    await manager.consumers.add('CLOSED', { durable_name: 'reader', ack_policy: AckPolicy.Explicit });
    const client = jetstream(connection);
    const received: string[] = [];
    const pull = await RestartingPull.start(
      await client.consumers.get('CLOSED', 'reader'),
      { max_messages: 10, callback: (message: JsMsg) => void received.push(message.string()) },
      connection,
      2_000,
    );
    await pull.close();
    await client.publish('closed.one', 'late');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received).toEqual([]);
    expect((await manager.consumers.info('CLOSED', 'reader')).num_pending).toBe(1);
  });

  // The server sends the messages while this process does not read its socket (the event loop is
  // held), and the pull is closed before it reads them: closing used to unsubscribe in the client at
  // once, so they were dropped on arrival and stayed delivered, unacknowledged, until the ack wait.
  it('hands the callback every message the server sent before it learnt of the close', async () => {
    const publisher = await connect({ servers: server.url, noAsyncTraces: true });
    const { manager, received, pull } = await startReader('DRAINED', 2_000);
    try {
      await publisher.flush();
      for (let index = 0; index < 5; index += 1) publisher.publish('drained.one', `sent ${index}`);
      // Let the client write them, then hold this process while the server stores and delivers them.
      await new Promise((resolve) => setImmediate(resolve));
      const heldUntil = Date.now() + 300;
      while (Date.now() < heldUntil) {
        // The event loop is held: the deliveries wait in the socket.
      }
      await pull.close();
      // The reader's acks reach the server before the answer to this ping.
      await connection.flush();
      const info = await manager.consumers.info('DRAINED', 'reader');
      // Whatever the server had sent by then (all five unless it was slower than the hold) reached
      // the callback in order and was acked: nothing is left delivered and unacknowledged.
      const delivered = info.delivered.consumer_seq;
      expect(delivered).toBeGreaterThan(0);
      expect(received).toEqual(['sent 0', 'sent 1', 'sent 2', 'sent 3', 'sent 4'].slice(0, delivered));
      expect(info.num_ack_pending).toBe(0);
    } finally {
      await publisher.close();
    }
  });

  it('closes within its bound while the server is away, without waiting for its return', async () => {
    const away = await NatsServerProcess.start();
    const own = await connect({ servers: away.url, noAsyncTraces: true, maxReconnectAttempts: -1 });
    try {
      const { pull } = await startReader('AWAY', 2_000, {}, own);
      await away.stop();
      const started = Date.now();
      await pull.close();
      expect(Date.now() - started).toBeLessThan(1_800);
    } finally {
      await own.close();
      await away.dispose();
    }
  });

  it('lets a pull due again on a closed connection go quietly: the log is closing', async () => {
    // The connection closes while an election's advisory or the connection's return has the pull
    // issued again; nothing awaits that restart, so a rejection of it would end the process.
    const own = await connect({ servers: server.url, noAsyncTraces: true });
    const { pull } = await startReader('CLOSING', 2_000, {}, own);
    try {
      await own.close();
      const restart = (pull as unknown as { restart(why: string): Promise<void> }).restart('a test');
      await expect(restart).resolves.toBeUndefined();
      expect(pull.restartCount).toBe(1);
      // And it is not tried again later.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(pull.restartCount).toBe(1);
    } finally {
      await pull.close();
    }
  });
});
