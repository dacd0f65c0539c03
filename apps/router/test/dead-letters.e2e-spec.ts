// Retries exhausted → dead letter, a 4xx → discarded, and the redrive that sends dead letters once
// more, all through the Config API with a 2 s retry window.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import { createServer, type AddressInfo } from 'node:net';
import {
  auditEvents,
  createDestination,
  createWebhookDestination,
  deliveryMetrics,
  destinationName,
  openTestSchema,
  POLLING_ENVIRONMENT,
  sendBatch,
  TEST_DATABASE_URL,
  trackMessage,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from './router-e2e.kit';

async function freePortWithNothingListening(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('dead letters, discards and redrive', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let unavailable: WebhookReceiver;
  let gone: WebhookReceiver;

  beforeAll(async () => {
    t = await startTributary({ environment: { ...POLLING_ENVIRONMENT, RETRY_WINDOW: '2s' } });
    source = await createWorkspaceAndSource(t);
    unavailable = await WebhookReceiver.start({ secret: 'unavailable' });
    unavailable.answer = () => 503;
    gone = await WebhookReceiver.start({ secret: 'gone' });
    gone.answer = () => 404;
    await createWebhookDestination(t, source, 'webhooks', unavailable, 'unavailable');
    await createWebhookDestination(t, source, 'webhooks-gone', gone, 'gone');
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await unavailable?.close();
    await gone?.close();
  });

  const deadLettersPath = () => `${destinationName(source, 'webhooks')}/dead-letters`;

  /** The debugger's latest outcome of a message per destination (`message-deliveries`). */
  async function latestOutcomes(messageId: string): Promise<unknown[]> {
    const response = await configApi(
      t,
      'GET',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/message-deliveries?message_id=${messageId}`,
    );
    expect(response.status).toBe(200);
    return response.body.message_deliveries[0].destinations;
  }

  it('dead-letters after the retry window, discards a 404 at once, and redrives on request', async () => {
    const message = trackMessage({ event: 'Will Be Dead Lettered' });
    const sentAt = await sendBatch(t, source, [message]);

    // 503: retried until the 2 s window is over, then dead-lettered with the reason and every attempt.
    const { value: letters } = await pollUntil('the message is dead-lettered', 15_000, async () => {
      const response = await configApi(t, 'GET', deadLettersPath());
      expect(response.status).toBe(200);
      return response.body.dead_letters.length > 0 ? response.body.dead_letters : undefined;
    });
    expect(letters).toHaveLength(1);
    const [letter] = letters;
    expect(letter).toMatchObject({
      name: expect.stringMatching(new RegExp(`^${deadLettersPath()}/\\d+$`)),
      message_id: message.messageId,
      reason: expect.stringMatching(/^retries exhausted after \d+ attempts: .*503/),
      message: { messageId: message.messageId, event: 'Will Be Dead Lettered' },
    });
    const attempts503 = unavailable.requests.filter((request) => request.messageId === message.messageId);
    expect(letter.attempts).toHaveLength(attempts503.length);
    expect(letter.attempts.length).toBeGreaterThanOrEqual(2);
    for (const attempt of letter.attempts)
      expect(attempt).toEqual({ time: expect.any(String), outcome: expect.stringMatching(/503/) });
    const lastAttempt = Date.parse(letter.attempts[letter.attempts.length - 1].time);
    expect(lastAttempt - Date.parse(letter.attempts[0].time)).toBeGreaterThanOrEqual(2_000);
    expect(Date.parse(letter.dead_letter_time)).toBeGreaterThanOrEqual(sentAt + 2_000);

    const unavailableMetrics = await waitForSettled(t, source, 'webhooks', 1);
    expect(unavailableMetrics.counts).toMatchObject({
      dead_lettered: 1,
      delivered: 0,
      retried: attempts503.length - 1,
    });

    // 404: discarded after one attempt, the reason kept in the metrics; never retried.
    const goneMetrics = await waitForSettled(t, source, 'webhooks-gone', 1);
    expect(goneMetrics.counts).toMatchObject({ discarded: 1, retried: 0, delivered: 0, dead_lettered: 0 });
    expect(goneMetrics.recent_discards).toEqual([
      { message_id: message.messageId, reason: expect.stringMatching(/404/), time: expect.any(String) },
    ]);
    expect(gone.requests.map((request) => request.messageId)).toEqual([message.messageId]);
    const goneLetters = await configApi(t, 'GET', `${destinationName(source, 'webhooks-gone')}/dead-letters`);
    expect(goneLetters.body.dead_letters).toEqual([]);

    // The receiver is fixed; a redrive sends the dead letter once more and it leaves the list.
    unavailable.answer = () => 200;
    const redrive = await configApi(t, 'POST', `${deadLettersPath()}:redrive`, {});
    expect(redrive.status).toBe(200);
    expect(redrive.body).toEqual({ redrive_id: expect.stringMatching(/^rd_/), state: 'RUNNING' });
    await waitForAccepted(unavailable, [message.messageId], 10_000);
    expect(unavailable.acceptedOnce(message.messageId)!.signatureValid).toBe(true);
    await pollUntil('the dead letter leaves the list', 10_000, async () => {
      const response = await configApi(t, 'GET', deadLettersPath());
      return response.body.dead_letters.length === 0 ? true : undefined;
    });

    // The redriven message is counted and shown where every delivery is: the destination's metrics
    // and the debugger's latest outcome, which replaces its dead letter.
    const { value: redrivenMetrics } = await pollUntil('the redrive is counted', 10_000, async () => {
      const metrics = await deliveryMetrics(t, source, 'webhooks');
      return metrics.counts.delivered === 1 ? metrics : undefined;
    });
    expect(redrivenMetrics.counts).toMatchObject({ delivered: 1, dead_lettered: 1 });
    const outcomes = await latestOutcomes(message.messageId);
    expect(outcomes).toHaveLength(2);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        {
          destination_name: destinationName(source, 'webhooks'),
          outcome: 'delivered',
          time: expect.any(String),
        },
        {
          destination_name: destinationName(source, 'webhooks-gone'),
          outcome: 'discarded',
          time: expect.any(String),
          detail: expect.stringMatching(/404/),
        },
      ]),
    );

    // The audit trail shows who asked for the redrive and what it delivered.
    const trail = await auditEvents(t, source, deadLettersPath());
    const requested = trail.find((entry) => entry.type === 'DestinationDeadLettersRedriveRequested');
    const redriven = trail.find((entry) => entry.type === 'DestinationDeadLettersRedriven');
    expect(requested).toMatchObject({
      resource_name: deadLettersPath(),
      data: { redriveId: redrive.body.redrive_id },
    });
    expect(requested.actor).not.toBe('system:router');
    expect(redriven).toMatchObject({
      actor: 'system:router',
      data: {
        redriveId: redrive.body.redrive_id,
        delivered: [Number(letter.name.split('/').pop())],
        failed: [],
      },
    });

    // A second redrive with nothing left sends nothing.
    const before = unavailable.requests.length;
    const again = await configApi(t, 'POST', `${deadLettersPath()}:redrive`, {});
    expect(again.status).toBe(200);
    await pollUntil('the second redrive is recorded', 10_000, async () => {
      const entries = await auditEvents(t, source, deadLettersPath());
      return entries.some(
        (entry) =>
          entry.type === 'DestinationDeadLettersRedriven' && entry.data.redriveId === again.body.redrive_id,
      )
        ? true
        : undefined;
    });
    expect(unavailable.requests.length).toBe(before);
    expect((await deliveryMetrics(t, source, 'webhooks-gone')).counts.discarded).toBe(1);
  }, 40_000);

  it('keeps a dead letter whose redrive fails again, with the new reason', async () => {
    const failing = await WebhookReceiver.start({ secret: 'still-failing' });
    try {
      failing.answer = () => 503;
      await createWebhookDestination(t, source, 'webhooks-still-failing', failing, 'still-failing');
      const message = trackMessage({ event: 'Still Failing' });
      await sendBatch(t, source, [message]);
      const path = `${destinationName(source, 'webhooks-still-failing')}/dead-letters`;
      await pollUntil('dead-lettered', 15_000, async () => {
        const response = await configApi(t, 'GET', path);
        return response.body.dead_letters.length > 0 ? true : undefined;
      });
      const attemptsBefore = failing.requests.length;
      const redrive = await configApi(t, 'POST', `${path}:redrive`, {});
      expect(redrive.status).toBe(200);
      const { value: recorded } = await pollUntil('the failed redrive is recorded', 10_000, async () => {
        const entries = await auditEvents(t, source, path);
        return entries.find((entry) => entry.type === 'DestinationDeadLettersRedriven');
      });
      expect(recorded.data).toMatchObject({
        delivered: [],
        failed: [{ reason: expect.stringMatching(/503/) }],
      });
      expect(failing.requests.length).toBe(attemptsBefore + 1);
      await sleep(100);
      const response = await configApi(t, 'GET', path);
      expect(response.body.dead_letters.map((letter: any) => letter.message_id)).toEqual([message.messageId]);
      // The failed redrive is counted and shown as what it left the message: still dead-lettered.
      const metrics = await deliveryMetrics(t, source, 'webhooks-still-failing');
      expect(metrics.counts).toMatchObject({ delivered: 0, dead_lettered: 2 });
      expect(await latestOutcomes(message.messageId)).toContainEqual({
        destination_name: destinationName(source, 'webhooks-still-failing'),
        outcome: 'dead_lettered',
        time: expect.any(String),
        detail: expect.stringMatching(/503/),
      });
    } finally {
      await failing.close();
    }
  }, 30_000);

  it('redrives a PostgreSQL dead letter once its connection string is fixed, rows as the live path writes them', async () => {
    const database = await openTestSchema();
    try {
      const closedPort = await freePortWithNothingListening();
      await createDestination(t, source, {
        slug: 'postgres',
        enabled: true,
        config: {
          connection_string: `postgres://postgres@127.0.0.1:${closedPort}/postgres`,
          schema: database.schema,
        },
      });
      const message = trackMessage({ event: 'Redriven Row' });
      await sendBatch(t, source, [message]);
      const path = `${destinationName(source, 'postgres')}/dead-letters`;
      const { value: letters } = await pollUntil('dead-lettered', 15_000, async () => {
        const response = await configApi(t, 'GET', path);
        return response.body.dead_letters.length > 0 ? response.body.dead_letters : undefined;
      });
      expect(letters[0]).toMatchObject({
        message_id: message.messageId,
        reason: expect.stringMatching(/cannot connect to PostgreSQL/),
      });
      // The connection string is a password setting: the dead letter does not show it.
      expect(JSON.stringify(letters[0])).not.toContain('postgres://postgres@');
      // Fixing the destination's settings is what makes the redrive succeed.
      const patched = await configApi(t, 'PATCH', destinationName(source, 'postgres'), {
        destination: {
          config: [
            {
              name: `${destinationName(source, 'postgres')}/config/connection_string`,
              value: TEST_DATABASE_URL,
            },
          ],
        },
        update_mask: { paths: ['destination.config'] },
      });
      expect(patched.status).toBe(200);

      const redrive = await configApi(t, 'POST', `${path}:redrive`, {});
      expect(redrive.status).toBe(200);
      await pollUntil('the dead letter leaves the list', 10_000, async () => {
        const response = await configApi(t, 'GET', path);
        return response.body.dead_letters.length === 0 ? true : undefined;
      });
      const rows = await database.client.query(
        `SELECT id, source_id, event_text FROM "${database.schema}".tracks`,
      );
      expect(rows.rows).toEqual([
        { id: message.messageId, source_id: source.sourceId, event_text: 'Redriven Row' },
      ]);
    } finally {
      await database.drop();
    }
  }, 30_000);

  it('answers 404 code 5 for the dead letters of a destination that does not exist', async () => {
    const listing = await configApi(t, 'GET', `${destinationName(source, 'nope')}/dead-letters`);
    expect(listing.status).toBe(404);
    expect(listing.body).toMatchObject({ code: 5 });
    const redrive = await configApi(t, 'POST', `${destinationName(source, 'nope')}/dead-letters:redrive`, {});
    expect(redrive.status).toBe(404);
    expect(redrive.body).toMatchObject({ code: 5 });
  });
});
