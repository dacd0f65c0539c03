// A destination that takes a message per request has at most ROUTER_MAX_IN_FLIGHT requests under way
// from a router, while its consumer holds as many again at hand, so the next request leaves as soon as
// one ends. Every message still arrives exactly once.
import { TRACKING_LOG, type TrackingLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { destinationConsumerName } from '../src/destination-consumers/consumer-names';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import {
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  waitForAccepted,
  WebhookReceiver,
} from './router-e2e.kit';

const REQUESTS_AT_ONCE = 4;
const MESSAGES = 24;
/** Slow enough that every slot stays taken while the test looks at the consumer. */
const RECEIVER_DELAY_MS = 400;

// The held messages are the log's own budget (JetStream's max_ack_pending, SQLite's outstanding rows):
// both logs run it. Without a nats-server binary the JetStream run is reported as skipped.
const natsBinary = NatsServerProcess.findBinary();
const LOGS = [
  ['SQLite', true],
  ['JetStream', natsBinary !== null],
] as const;

describe.each(LOGS)('requests at once per destination, %s log', (log, runs) => {
  let t: TributaryTestInstance;
  let nats: NatsServerProcess | undefined;
  let source: TestSource;
  let receiver: WebhookReceiver;
  const test = runs ? it : it.skip;

  beforeAll(async () => {
    if (!runs) return;
    if (log === 'JetStream') nats = await NatsServerProcess.start();
    t = await startTributary({
      environment: {
        ...POLLING_ENVIRONMENT,
        ...(nats && { NATS_URL: nats.url }),
        ROUTER_MAX_IN_FLIGHT: String(REQUESTS_AT_ONCE),
      },
    });
    source = await createWorkspaceAndSource(t);
    receiver = await WebhookReceiver.start({ secret: 'slow', delayMs: RECEIVER_DELAY_MS });
    await createWebhookDestination(t, source, 'webhooks', receiver, 'slow');
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await receiver?.close();
    await nats?.dispose();
  });

  test('sends at most ROUTER_MAX_IN_FLIGHT at once while holding twice as many, and delivers each once', async () => {
    const messages = Array.from({ length: MESSAGES }, (_, index) => trackMessage({ event: `Slow ${index}` }));
    await sendBatch(t, source, messages);

    // The consumer holds the requests under way and as many again, pulled and waiting for a slot.
    const log = t.app.get<TrackingLog>(TRACKING_LOG);
    const consumerName = destinationConsumerName(source.sourceId, 'webhooks');
    await pollUntil(`${2 * REQUESTS_AT_ONCE} messages held by ${consumerName}`, 5_000, async () =>
      (await log.consumerLag(consumerName)).unacknowledged === 2 * REQUESTS_AT_ONCE ? true : undefined,
    );
    expect(receiver.openRequests).toBeLessThanOrEqual(REQUESTS_AT_ONCE);

    await waitForAccepted(
      receiver,
      messages.map((message) => message.messageId),
      30_000,
    );
    expect(receiver.mostOpenRequests).toBe(REQUESTS_AT_ONCE);
    for (const message of messages) expect(receiver.acceptedOnce(message.messageId)).toBeDefined();
    expect(receiver.requests).toHaveLength(MESSAGES);
  });
});
