// Where each message went, per destination, as the console's debugger asks it: the router's memory of
// recent outcomes behind GET .../sources/{src}/message-deliveries, with the Config API's auth and errors.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createFilter,
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  WebhookReceiver,
  waitForSettled,
} from './router-e2e.kit';

describe('GET /v1beta/workspaces/{ws}/sources/{src}/message-deliveries', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let other: TestSource;
  let receiver: WebhookReceiver;
  let path: string;

  beforeAll(async () => {
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    receiver = await WebhookReceiver.start({ secret: 's' });
    source = await createWorkspaceAndSource(t);
    other = await createWorkspaceAndSource(t);
    path = `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/message-deliveries`;
    await createWebhookDestination(t, source, 'webhooks', receiver, 's');
    await createFilter(t, source, 'webhooks', {
      if: "event = 'Ignored'",
      actions: [{ type: 'drop_event' }],
      enabled: true,
    });
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.stop({ removeData: true });
  });

  it("answers each message's latest outcome per destination once the router settled it", async () => {
    const delivered = trackMessage();
    const filtered = trackMessage({ event: 'Ignored' });
    await sendBatch(t, source, [delivered, filtered]);
    await waitForSettled(t, source, 'webhooks', 2);
    const query = `message_id=${delivered.messageId}&message_id=${filtered.messageId}&message_id=never-sent`;
    const { value: answer } = await pollUntil('both outcomes', 10_000, async () => {
      const response = await configApi(t, 'GET', `${path}?${query}`);
      return response.body.message_deliveries.every(
        (entry: any) => entry.message_id === 'never-sent' || entry.destinations.length > 0,
      )
        ? response
        : undefined;
    });
    expect(answer.status).toBe(200);
    const destination = `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations/webhooks`;
    expect(answer.body.message_deliveries).toEqual([
      {
        message_id: delivered.messageId,
        destinations: [{ destination_name: destination, outcome: 'delivered', time: expect.any(String) }],
      },
      {
        message_id: filtered.messageId,
        destinations: [{ destination_name: destination, outcome: 'filtered', time: expect.any(String) }],
      },
      { message_id: 'never-sent', destinations: [] },
    ]);
  });

  it('keeps sources apart: a message id of one source is unknown under another', async () => {
    const message = trackMessage();
    await sendBatch(t, source, [message]);
    await waitForSettled(t, source, 'webhooks', 3);
    const otherPath = `workspaces/${other.workspaceSlug}/sources/${other.sourceSlug}/message-deliveries`;
    const response = await configApi(t, 'GET', `${otherPath}?message_id=${message.messageId}`);
    expect(response.body.message_deliveries).toEqual([{ message_id: message.messageId, destinations: [] }]);
  });

  it('answers 400 without a message id or with too many, 404 for an unknown source, 401 without a token', async () => {
    expect(await configApi(t, 'GET', path)).toMatchObject({ status: 400, body: { code: 3 } });
    const tooMany = Array.from({ length: 101 }, (_, index) => `message_id=m${index}`).join('&');
    expect(await configApi(t, 'GET', `${path}?${tooMany}`)).toMatchObject({ status: 400, body: { code: 3 } });
    const unknown = `workspaces/${source.workspaceSlug}/sources/nope/message-deliveries?message_id=x`;
    expect(await configApi(t, 'GET', unknown)).toMatchObject({ status: 404, body: { code: 5 } });
    const anonymous = await fetch(`${t.baseUrl}/v1beta/${path}?message_id=x`);
    expect(anonymous.status).toBe(401);
  });
});
