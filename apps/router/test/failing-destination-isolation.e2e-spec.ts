// Design invariant 3, end to end: one webhook answers 500 for a while, then recovers. Every message
// still reaches it (retries with backoff), and the healthy webhook's end-to-end latency meanwhile
// stays what it was without the outage.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, sleep, type TestSource } from '../../../test/support/tracking-e2e.kit';
import {
  createWebhookDestination,
  median,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from './router-e2e.kit';

/** Messages per phase, sent one request at a time this far apart, so they do not queue behind each other. */
const MESSAGES_PER_PHASE = 30;
const SEND_SPACING_MS = 40;

describe('a failing destination does not slow a healthy one', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let healthy: WebhookReceiver;
  let flaky: WebhookReceiver;

  beforeAll(async () => {
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    healthy = await WebhookReceiver.start({ secret: 'healthy' });
    flaky = await WebhookReceiver.start({ secret: 'flaky' });
    await createWebhookDestination(t, source, 'webhooks', healthy, 'healthy');
    await createWebhookDestination(t, source, 'webhooks-flaky', flaky, 'flaky');
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await healthy?.close();
    await flaky?.close();
  });

  /** Sends one message per request; returns each message's id and send time. */
  async function sendSpaced(label: string): Promise<Map<string, number>> {
    const sentAt = new Map<string, number>();
    for (let index = 0; index < MESSAGES_PER_PHASE; index++) {
      const message = trackMessage({ event: `${label} ${index}` });
      sentAt.set(message.messageId, await sendBatch(t, source, [message]));
      await sleep(SEND_SPACING_MS);
    }
    return sentAt;
  }

  function healthyLatencyP50(sentAt: Map<string, number>): number {
    return median([...sentAt].map(([messageId, at]) => healthy.acceptedOnce(messageId)!.arrivedAt - at));
  }

  it('keeps the healthy latency during the outage and delivers everything to the recovered one', async () => {
    // Warm-up: connections, JIT and table layouts settle before anything is measured.
    await sendSpaced('warm-up');

    const baseline = await sendSpaced('baseline');
    await waitForAccepted(healthy, [...baseline.keys()], 10_000);
    await waitForAccepted(flaky, [...baseline.keys()], 10_000);
    const baselineP50 = healthyLatencyP50(baseline);

    flaky.answer = () => 500;
    const outageStarted = Date.now();
    const duringOutage = await sendSpaced('outage');
    await waitForAccepted(healthy, [...duringOutage.keys()], 10_000);
    const outageP50 = healthyLatencyP50(duringOutage);
    const failedAttempts = flaky.requests.filter((request) => request.status === 500).length;
    expect(failedAttempts).toBeGreaterThanOrEqual(MESSAGES_PER_PHASE);
    flaky.answer = () => 200;
    const outageMs = Date.now() - outageStarted;

    // Backoff starts near 1 s and doubles: a message that failed through the whole outage waits at
    // most about twice the outage for its next attempt.
    const recoveryMs = await waitForAccepted(flaky, [...duringOutage.keys()], 2 * outageMs + 10_000);
    const total = 3 * MESSAGES_PER_PHASE;
    const healthyMetrics = await waitForSettled(t, source, 'webhooks', total);
    const flakyMetrics = await waitForSettled(t, source, 'webhooks-flaky', total);

    console.log(
      `healthy p50 ${baselineP50} ms before, ${outageP50} ms during a ${outageMs} ms outage ` +
        `(${failedAttempts} failed attempts); the flaky one caught up ${recoveryMs} ms after recovering`,
    );
    expect(outageP50).toBeLessThan(2 * baselineP50 + 200);

    expect(healthyMetrics.counts).toMatchObject({
      delivered: total,
      retried: 0,
      dead_lettered: 0,
      discarded: 0,
    });
    expect(flakyMetrics.counts).toMatchObject({
      delivered: total,
      retried: failedAttempts,
      dead_lettered: 0,
      discarded: 0,
    });
    // No message was accepted twice by either receiver.
    expect(new Set(healthy.acceptedIds()).size).toBe(total);
    expect(healthy.acceptedIds()).toHaveLength(total);
    expect(new Set(flaky.acceptedIds()).size).toBe(total);
    expect(flaky.acceptedIds()).toHaveLength(total);
    for (const request of flaky.requests) expect(request.signatureValid).toBe(true);
  }, 60_000);
});
