// Two tracking API replicas as separate processes on one nats-server, each with its own dedupe index
// (DEDUPE_INDEX_DIR) that follows the shared log: a duplicate sent to one replica of a message stored
// through the other is refused after JetStream's guard window has passed (only the index can know
// it), and the same batch sent to both at once is stored once (the guard settles that race).
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POLLING_ENVIRONMENT, trackMessage } from '../../apps/router/test/router-e2e.kit';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type ApiEndpoint,
  type TestSource,
} from '../support/tracking-e2e.kit';
import { copiesOf, storedTrackingMessageIds } from '../support/tracking-log.reader';
import { spawnTributaryApp, type TributaryProcess } from '../support/tributary-process';

const GUARD_MS = 1_000;

describe('two tracking API replicas sharing one nats-server, each with its own dedupe index', () => {
  const processes: TributaryProcess[] = [];
  let nats: NatsServerProcess;
  let dataDir: string;
  let replicaA: ApiEndpoint;
  let replicaB: ApiEndpoint;
  let source: TestSource;

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-dedupe-replicas-'));
    const environment = {
      ...POLLING_ENVIRONMENT,
      NATS_URL: nats.url,
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
      DEDUPE_INDEX: 'on',
      DEDUPE_GUARD_WINDOW: `${GUARD_MS}ms`,
    };
    const configApi = await spawnTributaryApp('config-api', { dataDir, environment });
    processes.push(configApi);
    source = await createWorkspaceAndSource({ baseUrl: configApi.baseUrl, adminToken: configApi.adminToken });
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        spawnTributaryApp('tracking-api', {
          dataDir,
          adminToken: configApi.adminToken,
          environment: { ...environment, DEDUPE_INDEX_DIR: join(dataDir, `index-${name}`) },
        }),
      ),
    );
    processes.push(a, b);
    replicaA = { baseUrl: a.baseUrl, adminToken: a.adminToken };
    replicaB = { baseUrl: b.baseUrl, adminToken: b.adminToken };
    // Each replica learns the write key from the shared store within a poll interval.
    for (const replica of [replicaA, replicaB]) {
      await pollUntil('the replica knows the write key', 15_000, async () => {
        const response = await postJson(replica, '/v1/batch', { batch: [trackMessage()] }, source.writeKey);
        return response.status === 200 ? true : undefined;
      });
    }
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((child) => child.kill('SIGTERM')));
    await nats?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  async function send(replica: ApiEndpoint, batch: Array<Record<string, unknown>>): Promise<void> {
    // A 503 (the replica's index catching up) is retried with the same messageIds, as clients do.
    await pollUntil('the batch is accepted', 15_000, async () => {
      const response = await postJson(replica, '/v1/batch', { batch }, source.writeKey);
      return response.status === 200 ? true : undefined;
    });
  }

  it('reports both replicas ready once their indexes follow the log', async () => {
    for (const replica of [replicaA, replicaB]) {
      const response = await fetch(`${replica.baseUrl}/health/ready`);
      const body = (await response.json()) as { info?: Record<string, { status: string }> };
      expect(response.status).toBe(200);
      expect(body.info?.['dedupe_index']).toEqual({ status: 'up' });
    }
  });

  it('refuses on replica B, after the guard window, the ids replica A stored', async () => {
    const batch = Array.from({ length: 30 }, (_, index) => trackMessage({ event: `From A ${index}` }));
    const ids = batch.map((message) => message.messageId as string);
    await send(replicaA, batch);
    await sleep(GUARD_MS + 1_000);
    await send(replicaB, batch);
    await send(replicaA, batch.slice(0, 10));
    expect(copiesOf(await storedTrackingMessageIds(nats.url), ids)).toEqual(ids.map(() => 1));
  }, 60_000);

  it('stores once a batch sent to both replicas at the same moment, and refuses both later', async () => {
    const batch = Array.from({ length: 50 }, (_, index) => trackMessage({ event: `Both ${index}` }));
    const ids = batch.map((message) => message.messageId as string);
    await Promise.all([
      send(replicaA, batch),
      send(replicaB, batch),
      send(replicaA, batch),
      send(replicaB, batch),
    ]);
    await sleep(GUARD_MS + 1_000);
    await Promise.all([send(replicaB, batch), send(replicaA, batch)]);
    expect(copiesOf(await storedTrackingMessageIds(nats.url), ids)).toEqual(ids.map(() => 1));
  }, 60_000);
});
