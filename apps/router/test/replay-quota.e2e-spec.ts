// The running-replay quota (issue 10, item 6): a workspace may have WORKSPACE_MAX_RUNNING_REPLAYS
// replays running at once; one more is refused with 429, code 8, until a running one finishes. The
// replays here are kept running by a receiver that answers slowly.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createWebhookDestination,
  destinationName,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  WebhookReceiver,
} from './router-e2e.kit';

describe('running replays per workspace', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let slow: WebhookReceiver;
  let startTime: string;

  beforeAll(async () => {
    t = await startTributary({ environment: { ...POLLING_ENVIRONMENT, WORKSPACE_MAX_RUNNING_REPLAYS: '1' } });
    source = await createWorkspaceAndSource(t);
    startTime = new Date(Date.now() - 1_000).toISOString();
    await sendBatch(
      t,
      source,
      Array.from({ length: 3 }, (_, index) => trackMessage({ event: `History ${index}` })),
    );
    slow = await WebhookReceiver.start({ secret: 'slow', delayMs: 1_500 });
    await createWebhookDestination(t, source, 'webhooks', slow, 'slow', { enabled: false });
    await createWebhookDestination(t, source, 'webhooks-b', slow, 'slow', { enabled: false });
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await slow?.close();
  });

  const requestReplay = (slug: string) =>
    configApi(t, 'POST', `${destinationName(source, slug)}/replays`, { replay: { start_time: startTime } });

  it('refuses a replay past the quota with 429, code 8, and accepts it once the running one finished', async () => {
    const first = await requestReplay('webhooks');
    expect(first.status).toBe(200);
    expect(first.body.state).toBe('RUNNING');

    const refused = await requestReplay('webhooks-b');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 8,
      error: expect.stringMatching(
        /^quota exceeded: workspace .* already has 1 replays running.*WORKSPACE_MAX_RUNNING_REPLAYS/,
      ),
    });

    const replayId = String(first.body.name).split('/').pop();
    await pollUntil('the first replay finishes', 60_000, async () => {
      const response = await configApi(
        t,
        'GET',
        `${destinationName(source, 'webhooks')}/replays/${replayId}`,
      );
      return response.body.state === 'RUNNING' ? undefined : true;
    });
    const accepted = await requestReplay('webhooks-b');
    expect(accepted.status).toBe(200);
  }, 120_000);
});
