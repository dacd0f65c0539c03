// A SUPPRESS_WITH_DELETE regulation run by the router, on the SQLite log and on JetStream
// (docs/regulations.md §4): the user's messages are stored, delivered (to webhooks and PostgreSQL) and
// dead-lettered first; then the log, the dead letters and the PostgreSQL tables hold none of them,
// each webhook received one signed delete, a replay cannot bring them back, new messages of the user
// are answered and dropped, and another user's data is untouched.
import { Analytics } from '@segment/analytics-node';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { configApi } from '../../../test/support/config-api.client';
import {
  createWorkspaceAndSource,
  eventLogOf,
  pollUntil,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createDestination,
  createWebhookDestination,
  destinationName,
  openTestSchema,
  POLLING_ENVIRONMENT,
  TEST_DATABASE_URL,
  waitForAccepted,
  WebhookReceiver,
} from './router-e2e.kit';

const natsServerBinary = NatsServerProcess.findBinary();

describe.each([
  ['the SQLite log', false],
  ['JetStream', true],
])('regulation deletion on %s', (_name, onJetStream) => {
  const maybe = onJetStream && !natsServerBinary ? it.skip : it;
  let nats: NatsServerProcess | undefined;
  let t: TributaryTestInstance;
  let source: TestSource;
  let delivered: WebhookReceiver;
  let failing: WebhookReceiver;
  let warehouse: Awaited<ReturnType<typeof openTestSchema>>;

  beforeAll(async () => {
    if (onJetStream && !natsServerBinary) return;
    nats = onJetStream ? await NatsServerProcess.start() : undefined;
    t = await startTributary({
      environment: { ...POLLING_ENVIRONMENT, RETRY_WINDOW: '1s', ...(nats ? { NATS_URL: nats.url } : {}) },
    });
    source = await createWorkspaceAndSource(t);
    delivered = await WebhookReceiver.start({ secret: 'delivered' });
    failing = await WebhookReceiver.start({ secret: 'failing' });
    failing.answer = () => 503;
    await createWebhookDestination(t, source, 'webhooks', delivered, 'delivered');
    await createWebhookDestination(t, source, 'webhooks-failing', failing, 'failing');
    warehouse = await openTestSchema();
    await createDestination(t, source, {
      slug: 'postgres',
      enabled: true,
      config: { connection_string: TEST_DATABASE_URL, schema: warehouse.schema },
    });
  }, 30_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await delivered?.close();
    await failing?.close();
    await warehouse?.drop();
    await nats?.dispose();
  }, 30_000);

  const deadLetterUsers = async (): Promise<string[]> => {
    const response = await configApi(t, 'GET', `${destinationName(source, 'webhooks-failing')}/dead-letters`);
    expect(response.status).toBe(200);
    return response.body.dead_letters.map((letter: any) => letter.message.userId);
  };
  /** Per table Tributary created, the user ids of its rows (`users`: their ids). */
  const warehouseUsers = async (): Promise<Record<string, string[]>> => {
    const tables = await warehouse.client.query<{ table_name: string }>(
      `SELECT table_name FROM "${warehouse.schema}"._tributary_tables ORDER BY table_name`,
    );
    const rows: Record<string, string[]> = {};
    for (const { table_name: table } of tables.rows) {
      const column = table === 'users' ? 'id' : 'user_id';
      const result = await warehouse.client.query(
        `SELECT ${column} AS user FROM "${warehouse.schema}"."${table}" ORDER BY 1`,
      );
      rows[table] = result.rows.map((row) => row.user);
    }
    return rows;
  };
  const storedUsers = async () =>
    [...(await readSourceMessages(t, source)).values()].map((m) => m.payload.userId);

  maybe(
    'erases the user from the log and dead letters, drops their new messages, keeps the others',
    async () => {
      const analytics = new Analytics({
        writeKey: source.writeKey,
        host: t.baseUrl,
        flushAt: 10,
        maxRetries: 1,
      });
      const sentIds: string[] = [];
      for (const userId of ['forget-me', 'keep-me', 'forget-me']) {
        analytics.track({ userId, event: 'Order Completed', properties: { total: 10 } });
      }
      analytics.identify({ userId: 'forget-me', traits: { email: 'forget@example.com' } });
      await analytics.closeAndFlush();
      const before = await readSourceMessages(t, source);
      expect([...before.values()].map((m) => m.payload.userId).sort()).toEqual([
        'forget-me',
        'forget-me',
        'forget-me',
        'keep-me',
      ]);
      sentIds.push(...before.keys());
      await waitForAccepted(delivered, sentIds, 15_000);
      await pollUntil('every message is dead-lettered at the failing destination', 20_000, async () =>
        (await deadLetterUsers()).length === 4 ? true : undefined,
      );
      await pollUntil('the warehouse holds every message', 20_000, async () => {
        const rows = await warehouseUsers().catch(() => ({}) as Record<string, string[]>);
        return rows['tracks']?.length === 3 && rows['identifies']?.length === 1 ? rows : undefined;
      });
      // The failing destination recovers: it takes the deletion like the others.
      failing.answer = () => 200;

      const created = await configApi(t, 'POST', `workspaces/${source.workspaceSlug}/regulations`, {
        regulation_type: 'Suppress_With_Delete',
        attributes: { name: 'userId', values: ['forget-me'] },
      });
      expect(created.status).toBe(200);
      const { value: final } = await pollUntil('the regulation is final', 30_000, async () => {
        const response = await configApi(t, 'GET', created.body.name);
        return response.body.finished_at ? response.body : undefined;
      });
      expect(final).toMatchObject({
        status: 'finished',
        overall_status: 'finished',
        stream_status: [
          {
            id: source.sourceId,
            destination_status: expect.arrayContaining(
              ['webhooks', 'webhooks-failing', 'postgres'].map((slug) => ({
                id: destinationName(source, slug),
                name: expect.any(String),
                status: 'finished',
                err_string: '',
                finished_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
              })),
            ),
          },
        ],
      });

      expect(await storedUsers()).toEqual(['keep-me']);
      expect(await deadLetterUsers()).toEqual(['keep-me']);
      const rows = await warehouseUsers();
      expect(rows['tracks']).toEqual(['keep-me']);
      expect(rows['identifies']).toEqual([]);
      expect(Object.values(rows).flat()).not.toContain('forget-me');
      expect(Object.values(rows).flat()).toContain('keep-me');

      // Each webhook received one signed delete for the user.
      for (const receiver of [delivered, failing]) {
        const deletes = receiver.requests.filter((request) => request.body?.type === 'delete');
        expect(deletes).toEqual([
          expect.objectContaining({
            status: 200,
            signatureValid: true,
            body: {
              type: 'delete',
              userId: 'forget-me',
              timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
              messageId: expect.stringMatching(/^delete-[0-9a-f]{32}$/),
            },
          }),
        ]);
      }

      // A replay from the start of the log cannot bring the user back.
      const replayFrom = new Date(Date.now() - 3_600_000).toISOString();
      const deliveredBefore = delivered.requests.length;
      const replay = await configApi(t, 'POST', `${destinationName(source, 'webhooks')}/replays`, {
        start_time: replayFrom,
      });
      expect(replay.status).toBe(200);
      await pollUntil('the replay completes', 20_000, async () => {
        const response = await configApi(t, 'GET', replay.body.name);
        return response.body.state === 'COMPLETED' ? true : undefined;
      });
      const replayed = delivered.requests
        .slice(deliveredBefore)
        .filter((request) => request.body?.type !== 'delete')
        .map((request) => request.messageId);
      const keptId = [...before.entries()].find(([, m]) => m.payload.userId === 'keep-me')![0];
      expect(replayed).toEqual([keptId]);

      // New messages of the user are answered as accepted and dropped.
      const later = new Analytics({ writeKey: source.writeKey, host: t.baseUrl, flushAt: 10, maxRetries: 1 });
      const errors: unknown[] = [];
      later.on('error', (error) => errors.push(error));
      later.track({ userId: 'forget-me', event: 'Came Back' });
      later.track({ userId: 'keep-me', event: 'Came Back' });
      await later.closeAndFlush();
      expect(errors).toEqual([]);
      expect((await storedUsers()).sort()).toEqual(['keep-me', 'keep-me']);

      // The log's own log lines and the audit trail hold the request, never the messages.
      expect(JSON.stringify(final)).not.toContain('Order Completed');
      await expect(eventLogOf(t).ping()).resolves.toBe(true);
    },
    90_000,
  );
});
