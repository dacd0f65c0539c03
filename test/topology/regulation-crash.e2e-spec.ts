// A SUPPRESS_WITH_DELETE regulation whose router is killed (SIGKILL) in the middle of the deletion, as
// is the tracking API, in the production topology (config-api, tracking-api, router as processes on
// one nats-server). A new router takes the regulation over from its lease and finishes it: nothing of
// the user is left in the log, every user's delete reaches the webhook (a retry under the same
// messageId), and the restarted tracking API still drops the user's new messages.
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, JetStreamEventLog } from '@tributary/event-log';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  readLog,
  type ApiEndpoint,
  type TestSource,
} from '../support/tracking-e2e.kit';
import { configApi } from '../support/config-api.client';
import { createWebhookDestination, WebhookReceiver } from '../../apps/router/test/router-e2e.kit';
import { StandaloneTopology } from './standalone-topology.kit';

// Four process starts on a shared two-core machine, and a lease takeover (10 s).
jest.setTimeout(300_000);

describe('a regulation survives a killed router and tracking API', () => {
  let topology: StandaloneTopology;
  let log: JetStreamEventLog;
  let receiver: WebhookReceiver;
  let configApiEndpoint: ApiEndpoint;

  beforeAll(async () => {
    topology = await StandaloneTopology.start('regulation-crash');
    configApiEndpoint = (await topology.startConfigApi()).endpoint;
    log = await JetStreamEventLog.connect({
      servers: topology.nats!.url,
      dedupeWindowMs: DEFAULT_DEDUPE_WINDOW_MS,
      retentionMs: DEFAULT_RETENTION_MS,
    });
    receiver = await WebhookReceiver.start({ secret: 'crash' });
  }, 60_000);

  afterAll(async () => {
    await log?.close();
    await topology?.dispose('SIGKILL');
    await receiver?.close();
  });

  async function send(trackingApi: ApiEndpoint, source: TestSource, userIds: string[]): Promise<void> {
    const batch = userIds.map((userId) => ({
      type: 'track',
      event: 'Paid',
      userId,
      messageId: `${userId}-${Math.random()}`,
    }));
    await pollUntil('the batch is accepted', 15_000, async () => {
      const response = await postJson(trackingApi, '/v1/batch', { batch }, source.writeKey);
      return response.status === 200 ? true : undefined;
    });
  }

  const storedUsers = async (source: TestSource) =>
    (await readLog(log, { sourceId: source.sourceId })).map((message) => message.payload.userId).sort();

  it('is finished by the next router from where the killed one stopped', async () => {
    const [router, trackingApi] = await Promise.all([
      topology.spawn('router'),
      topology.spawn('tracking-api'),
    ]);
    const source = await createWorkspaceAndSource(configApiEndpoint);
    await createWebhookDestination(configApiEndpoint, source, 'webhooks', receiver, 'crash');
    const subjects = ['gone-1', 'gone-2', 'gone-3', 'gone-4'];
    await send(topology.endpointOf(trackingApi), source, [...subjects, 'stays', 'gone-1']);
    await pollUntil('every message is delivered', 20_000, async () =>
      receiver.accepted().length === 6 ? true : undefined,
    );

    // Each delete is answered slowly: the router is still forwarding when it is killed.
    receiver.delayMs = 1_500;
    const created = await configApi(
      configApiEndpoint,
      'POST',
      `workspaces/${source.workspaceSlug}/regulations`,
      {
        regulation_type: 'Suppress_With_Delete',
        attributes: { name: 'userId', values: subjects },
      },
    );
    expect(created.status).toBe(200);
    await pollUntil('the first delete arrives', 20_000, async () =>
      receiver.requests.some((request) => request.body?.type === 'delete') ? true : undefined,
    );
    await router.kill('SIGKILL');
    await trackingApi.kill('SIGKILL');
    receiver.delayMs = 0;
    // The config API learns of the router's start from the shared store, a moment after the router
    // wrote it: its projection follows, it is not read through.
    await pollUntil('the config API reads the regulation as running', 10_000, async () =>
      (await configApi(configApiEndpoint, 'GET', created.body.name)).body.status === 'running'
        ? true
        : undefined,
    );

    const [nextTrackingApi] = await Promise.all([topology.spawn('tracking-api'), topology.spawn('router')]);
    const { value: final } = await pollUntil('the regulation is final', 90_000, async () => {
      const response = await configApi(configApiEndpoint, 'GET', created.body.name);
      return response.body.finished_at ? response.body : undefined;
    });
    expect(final).toMatchObject({
      status: 'finished',
      stream_status: [{ destination_status: [{ status: 'finished', err_string: '' }] }],
    });

    expect(await storedUsers(source)).toEqual(['stays']);
    const deletes = receiver.requests.filter((request) => request.body?.type === 'delete');
    const deletedUsers = new Set(deletes.map((request) => request.body.userId));
    expect([...deletedUsers].sort()).toEqual(subjects);
    // A user sent again after the takeover keeps its request's id.
    for (const userId of subjects) {
      expect(
        new Set(deletes.filter((request) => request.body.userId === userId).map((r) => r.body.messageId))
          .size,
      ).toBe(1);
    }

    // The restarted tracking API follows the suppression from the config it reads at start.
    await send(topology.endpointOf(nextTrackingApi), source, ['gone-2', 'stays']);
    expect(await storedUsers(source)).toEqual(['stays', 'stays']);
  });
});
