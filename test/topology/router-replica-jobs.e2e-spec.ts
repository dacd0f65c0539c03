// Replays and dead-letter redrives with two router replicas on one real nats-server, as the standalone
// processes of the production topology (config-api, tracking-api, router x2; config shared through one
// SQLite event store). Each job runs in the one replica holding its lease: a redrive sends each dead
// letter once, a replay's recorded counts are complete, and a replica killed mid-job (SIGKILL) leaves
// its job to the other, which finishes it (counts still exact for a replay).
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, JetStreamEventLog } from '@tributary/event-log';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type ApiEndpoint,
  type TestSource,
} from '../support/tracking-e2e.kit';
import { configApi } from '../support/config-api.client';
import {
  auditEvents,
  createWebhookDestination,
  deliveryMetrics,
  destinationName,
  trackMessage,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { REPLAY_SETTLING_ROOM } from '../../apps/router/src/replays/replay-runner.service';
import type { TributaryProcess } from '../support/tributary-process';
import { StandaloneTopology } from './standalone-topology.kit';

/** After a job is over, how long to keep watching for a second copy of anything. */
const DUPLICATE_WATCH_MS = 1_500;
/** The router's lease time to live (JOB_LEASE_TTL_MS) and claim retry, plus margin. */
const TAKEOVER_MS = 10_000 + 2_000 + 3_000;
/** The replay consumer's ack wait (DELIVERY_ACK_WAIT_MS): a dead replica's deliveries come back after it. */
const ACK_WAIT_MS = 30_000;
/** What a replay holds at most: ROUTER_MAX_IN_FLIGHT (64) requests, and its settling room. */
const REPLAY_HELD = 64 + REPLAY_SETTLING_ROOM;

describe('replays and redrives with two router replicas on one JetStream', () => {
  const receivers: WebhookReceiver[] = [];
  let routers: TributaryProcess[] = [];
  let topology: StandaloneTopology;
  let leases: JetStreamEventLog;
  let configApiEndpoint: ApiEndpoint;
  let trackingApi: ApiEndpoint;

  beforeAll(async () => {
    // Failing deliveries are dead-lettered after a second.
    topology = await StandaloneTopology.start('topology-jobs', { RETRY_WINDOW: '1s' });
    configApiEndpoint = (await topology.startConfigApi()).endpoint;
    const started = await Promise.all([spawnRouter(), spawnRouter(), topology.spawn('tracking-api')]);
    trackingApi = topology.endpointOf(started[2]);
    // The apps' own settings (the defaults), so connecting changes nothing on the streams.
    leases = await JetStreamEventLog.connect({
      servers: topology.nats!.url,
      dedupeWindowMs: DEFAULT_DEDUPE_WINDOW_MS,
      retentionMs: DEFAULT_RETENTION_MS,
    });
  }, 60_000);

  afterAll(async () => {
    await leases?.close();
    await topology?.dispose('SIGTERM');
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function spawnRouter(): Promise<TributaryProcess> {
    const router = await topology.spawn('router');
    routers.push(router);
    return router;
  }

  async function startReceiver(secret: string, delayMs = 0): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start({ secret, delayMs });
    receivers.push(receiver);
    return receiver;
  }

  const endpoint = (router: TributaryProcess): ApiEndpoint => topology.endpointOf(router);

  /** Sends `count` messages; the tracking API learns a new write key within a poll, so it may refuse at first. */
  async function sendMessages(source: TestSource, count: number, label: string): Promise<string[]> {
    const sent: string[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = Array.from({ length: Math.min(50, count - start) }, (_, index) =>
        trackMessage({ event: `${label} ${start + index}` }),
      );
      await pollUntil(`batch at ${start} accepted`, 10_000, async () => {
        const response = await postJson(trackingApi, '/v1/batch', { batch }, source.writeKey);
        return response.status === 200 ? true : undefined;
      });
      sent.push(...batch.map((message) => message.messageId as string));
    }
    return sent;
  }

  async function deadLetterCount(router: TributaryProcess, source: TestSource): Promise<number> {
    const response = await configApi(
      endpoint(router),
      'GET',
      `${destinationName(source, 'webhooks')}/dead-letters?page_size=1000`,
    );
    if (response.status !== 200) throw new Error(`dead letters: ${response.status}`);
    return response.body.dead_letters.length;
  }

  /** A source whose webhook answers 503 until told otherwise: every message sent ends as a dead letter. */
  async function deadLettered(count: number, label: string) {
    const source = await createWorkspaceAndSource(configApiEndpoint);
    const receiver = await startReceiver(label);
    receiver.answer = () => 503;
    await createWebhookDestination(configApiEndpoint, source, 'webhooks', receiver, label);
    const sent = await sendMessages(source, count, label);
    await pollUntil(`${count} messages dead-lettered`, 20_000, async () =>
      (await deadLetterCount(routers[0], source)) === count ? true : undefined,
    );
    return { source, receiver, sent };
  }

  async function redriveAndWait(
    source: TestSource,
    router: TributaryProcess,
    afterRequest?: () => Promise<void>,
  ) {
    const redrive = await configApi(
      endpoint(router),
      'POST',
      `${destinationName(source, 'webhooks')}/dead-letters:redrive`,
      {},
    );
    expect(redrive.status).toBe(200);
    await afterRequest?.();
    const survivors = () =>
      routers.filter((candidate) => candidate.child.exitCode === null && !candidate.child.signalCode);
    await pollUntil('the dead letters leave the list', 60_000, async () => {
      const counts = await Promise.all(survivors().map((candidate) => deadLetterCount(candidate, source)));
      return counts.every((count) => count === 0) ? true : undefined;
    });
    return redrive.body.redrive_id as string;
  }

  async function redrivenEvents(source: TestSource, redriveId: string): Promise<any[]> {
    const trail = await auditEvents(
      configApiEndpoint,
      source,
      `${destinationName(source, 'webhooks')}/dead-letters`,
    );
    return trail.filter(
      (entry) => entry.type === 'DestinationDeadLettersRedriven' && entry.data.redriveId === redriveId,
    );
  }

  function copiesOf(receiver: WebhookReceiver): Map<string, number> {
    const copies = new Map<string, number>();
    for (const id of receiver.acceptedIds()) copies.set(id, (copies.get(id) ?? 0) + 1);
    return copies;
  }

  /** The router process whose pid is in the lease's holder id (`<host>-<pid>-<random>`). */
  async function holderOf(leaseName: string): Promise<TributaryProcess> {
    const { value } = await pollUntil(`lease ${leaseName} is held`, 10_000, async () => {
      const lease = await leases.readLease(leaseName);
      if (!lease || lease.holder === '') return undefined;
      const pid = Number(lease.holder.split('-').at(-2));
      return routers.find((router) => router.child.pid === pid);
    });
    return value;
  }

  /** A replay COMPLETED with every message counted delivered, and each sent exactly once. */
  async function expectCompletedOnce(replay: unknown, sent: string[], receiver: WebhookReceiver) {
    expect(replay).toMatchObject({
      state: 'COMPLETED',
      counts: { delivered: sent.length, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 },
    });
    await sleep(DUPLICATE_WATCH_MS);
    const copies = copiesOf(receiver);
    expect(new Set(copies.keys())).toEqual(new Set(sent));
    expect([...copies].filter(([, count]) => count > 1)).toEqual([]);
  }

  async function replayAndWait(source: TestSource, startTime: string, timeoutMs: number) {
    const replaysPath = `${destinationName(source, 'webhooks')}/replays`;
    const created = await configApi(configApiEndpoint, 'POST', replaysPath, { start_time: startTime });
    expect(created.status).toBe(200);
    const replayId = (created.body.name as string).split('/').pop()!;
    const finished = pollUntil(
      `replay ${replayId} finishes`,
      timeoutMs,
      async () => {
        const response = await configApi(configApiEndpoint, 'GET', `${replaysPath}/${replayId}`);
        return response.body?.state === 'RUNNING' ? undefined : response.body;
      },
      200,
    );
    return { replayId, finished };
  }

  it('redrives each dead letter exactly once, recorded once', async () => {
    const { source, receiver, sent } = await deadLettered(40, 'redrive-once');
    receiver.answer = () => 200;
    const redriveId = await redriveAndWait(source, routers[0]);
    await sleep(DUPLICATE_WATCH_MS);

    const copies = copiesOf(receiver);
    expect(new Set(copies.keys())).toEqual(new Set(sent));
    expect([...copies].filter(([, count]) => count > 1)).toEqual([]);
    expect(receiver.accepted().every((request) => request.signatureValid)).toBe(true);
    const recorded = await redrivenEvents(source, redriveId);
    expect(recorded).toHaveLength(1);
    expect(recorded[0].data.delivered).toHaveLength(sent.length);
    expect(recorded[0].data.failed).toEqual([]);
  }, 60_000);

  it('replays with complete counts, every message sent once, by one replica', async () => {
    const source = await createWorkspaceAndSource(configApiEndpoint);
    const startTime = new Date(Date.now() - 1_000).toISOString();
    const sent = await sendMessages(source, 400, 'replay-counts');
    // Slow enough (64 in flight at 150 ms: about 1 s) that both replicas see the replay while it runs.
    const receiver = await startReceiver('replay-counts', 150);
    await createWebhookDestination(configApiEndpoint, source, 'webhooks', receiver, 'replay-counts', {
      enabled: false,
    });
    const { finished } = await replayAndWait(source, startTime, 30_000);
    const { value: replay } = await finished;
    await expectCompletedOnce(replay, sent, receiver);

    // One replica ran it: its delivery metrics hold every delivery, the other's none.
    const deliveredBy = await Promise.all(
      routers.map(
        async (router) => (await deliveryMetrics(endpoint(router), source, 'webhooks')).counts.delivered,
      ),
    );
    expect(deliveredBy.sort((a, b) => a - b)).toEqual([0, sent.length]);
  }, 60_000);

  it('finishes a redrive whose replica is killed mid-way, in the other one', async () => {
    const { source, receiver, sent } = await deadLettered(30, 'redrive-kill');
    receiver.answer = () => 200;
    // Slow enough that the redrive is still going when its replica dies (30 x 200 ms).
    receiver.delayMs = 200;
    let killed: TributaryProcess | undefined;
    const redriveId = await redriveAndWait(source, routers[0], async () => {
      await pollUntil('the redrive is under way', 10_000, async () =>
        receiver.acceptedIds().length >= 5 ? true : undefined,
      );
      killed = await holderOf(`redrive_${source.sourceId}_webhooks`);
      await killed.kill('SIGKILL');
    });
    const survivor = routers.find((router) => router !== killed)!;
    expect(killed).toBeDefined();
    expect(await deadLetterCount(survivor, source)).toBe(0);
    await sleep(DUPLICATE_WATCH_MS);

    const copies = copiesOf(receiver);
    expect(new Set(copies.keys())).toEqual(new Set(sent));
    // Progress is saved after each letter: only the one in flight when the replica died may go twice.
    expect([...copies].filter(([, count]) => count > 1).length).toBeLessThanOrEqual(1);
    const recorded = await redrivenEvents(source, redriveId);
    expect(recorded).toHaveLength(1);
    expect(recorded[0].data.delivered).toHaveLength(sent.length);
    expect(recorded[0].actor).toBe('system:router');

    // Two replicas again for what follows.
    routers = routers.filter((router) => router !== killed);
    await spawnRouter();
  }, 90_000);

  it('hands a replay over at once when its replica stops gracefully, counts exact and nothing sent twice', async () => {
    const source = await createWorkspaceAndSource(configApiEndpoint);
    const startTime = new Date(Date.now() - 1_000).toISOString();
    const sent = await sendMessages(source, 300, 'replay-handover');
    const receiver = await startReceiver('replay-handover', 400);
    await createWebhookDestination(configApiEndpoint, source, 'webhooks', receiver, 'replay-handover', {
      enabled: false,
    });
    const { replayId, finished } = await replayAndWait(source, startTime, 20_000);
    await pollUntil('the replay is under way', 10_000, async () =>
      receiver.acceptedIds().length >= 80 ? true : undefined,
    );
    const stopped = await holderOf(`replay_${replayId}`);
    const stoppedAt = Date.now();
    // SIGTERM: the replica finishes what it has in flight, saves it and releases the lease.
    await stopped.kill('SIGTERM');
    routers = routers.filter((router) => router !== stopped);
    try {
      expect(stopped.child.exitCode).toBe(0);
      const { value: replay } = await finished;
      // Well within the ack wait: nothing had to wait for a redelivery.
      expect(Date.now() - stoppedAt).toBeLessThan(ACK_WAIT_MS / 2);
      await expectCompletedOnce(replay, sent, receiver);
    } finally {
      // Even after a failure above, the next test has its two replicas.
      await spawnRouter();
    }
  }, 60_000);

  it(
    'finishes a replay whose replica is killed mid-way, in the other one, with exact counts',
    async () => {
      const source = await createWorkspaceAndSource(configApiEndpoint);
      const startTime = new Date(Date.now() - 1_000).toISOString();
      const sent = await sendMessages(source, 300, 'replay-kill');
      // 64 deliveries in flight at 400 ms each: the replay takes about 2 s, long enough to kill it mid-way.
      const receiver = await startReceiver('replay-kill', 400);
      await createWebhookDestination(configApiEndpoint, source, 'webhooks', receiver, 'replay-kill', {
        enabled: false,
      });
      // The takeover and the ack wait; then what the dead replica held comes back, each message one at a
      // time as a suspect (400 ms each), and the rest of the replay, on a two-core machine under a full suite.
      const recoveryMs = TAKEOVER_MS + ACK_WAIT_MS + REPLAY_HELD * 400 + 10_000;
      const { replayId, finished } = await replayAndWait(source, startTime, recoveryMs);
      await pollUntil('the replay is under way', 10_000, async () =>
        receiver.acceptedIds().length >= 80 ? true : undefined,
      );
      const killed = await holderOf(`replay_${replayId}`);
      await killed.kill('SIGKILL');
      expect(new Set(receiver.acceptedIds()).size).toBeLessThan(sent.length);

      const { value: replay } = await finished;
      // Every message counted once: what the dead replica saved, and the rest by the survivor.
      expect(replay).toMatchObject({
        state: 'COMPLETED',
        counts: { delivered: sent.length, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 },
      });
      const copies = copiesOf(receiver);
      expect(new Set(copies.keys())).toEqual(new Set(sent));
      // At least once: only what the dead replica had sent and not counted (at most what it held) is sent again.
      expect([...copies].filter(([, count]) => count > 1).length).toBeLessThanOrEqual(REPLAY_HELD);
      const lease = await leases.readLease(`replay_${replayId}`);
      expect(lease).toMatchObject({ holder: '', data: { done: true } });
    },
    TAKEOVER_MS + ACK_WAIT_MS + REPLAY_HELD * 400 + 30_000,
  );
});
