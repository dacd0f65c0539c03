// One bad function stays in its lane (docs/functions.md §1): a destination function that spins and
// one that eats memory, on the same source as a webhook destination that keeps delivering meanwhile.
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, sleep, type TestSource } from '../support/tracking-e2e.kit';
import {
  createWebhookDestination,
  sendBatch,
  trackMessage,
  waitForAccepted,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import {
  createFunction,
  createFunctionDestination,
  FetchReceiver,
  FUNCTION_ENVIRONMENT,
  MEMORY_BOMB,
  outcomesOf,
} from './functions-e2e.kit';

/** Tells the receiver it started, then spins; any other event passes. */
const SPINNER = `
async function onTrack(event, settings) {
  if (event.event !== 'Spin') return;
  await fetch(settings.endpoint + '/started', { method: 'POST', body: JSON.stringify({ id: event.messageId }) });
  while (true) {}
}
`;
/** Tells the receiver it started, then allocates without end; any other event passes. */
const HOARDER = `
async function onTrack(event, settings) {
  if (event.event !== 'Hoard') return;
  await fetch(settings.endpoint + '/started', { method: 'POST', body: JSON.stringify({ id: event.messageId }) });
  ${MEMORY_BOMB}
}
`;

describe('a hostile destination function beside a webhook destination', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let healthy: WebhookReceiver;
  let starts: FetchReceiver;
  let spinnerId: string;
  let hoarderId: string;

  beforeAll(async () => {
    t = await startTributary({ environment: { ...FUNCTION_ENVIRONMENT, RETRY_WINDOW: '1m' } });
    source = await createWorkspaceAndSource(t);
    healthy = await WebhookReceiver.start({ secret: 'healthy' });
    starts = await FetchReceiver.start();
    const settings = [{ name: 'endpoint', required: true }];
    spinnerId = await createFunction(t, source.workspaceSlug, 'DESTINATION', SPINNER, settings);
    hoarderId = await createFunction(t, source.workspaceSlug, 'DESTINATION', HOARDER, settings);
    await createWebhookDestination(t, source, 'webhooks', healthy, 'healthy');
    await createFunctionDestination(t, source, spinnerId, { endpoint: starts.url });
    await createFunctionDestination(t, source, hoarderId, { endpoint: starts.url });
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await healthy?.close();
    await starts?.close();
  });

  it('keeps delivering to the webhook while the function spins and runs out of memory', async () => {
    const spinning = trackMessage({ event: 'Spin' });
    const hoarding = trackMessage({ event: 'Hoard' });
    await sendBatch(t, source, [spinning, hoarding]);
    await pollUntil('the hostile function starts', 15_000, async () =>
      starts.callsTo('/started').length > 0 ? true : undefined,
    );

    // Healthy messages every 100 ms for 4 s, while the function's invocations run and are retried.
    const healthyIds: string[] = [];
    const sentAt = new Map<string, number>();
    for (let round = 0; round < 40; round += 1) {
      const message = trackMessage({ event: 'Healthy' });
      healthyIds.push(message.messageId);
      sentAt.set(message.messageId, await sendBatch(t, source, [message]));
      await sleep(100);
    }
    await waitForAccepted(healthy, [spinning.messageId, hoarding.messageId], 10_000);
    await waitForAccepted(healthy, healthyIds, 10_000);

    // Each healthy message arrived promptly, and some arrived while a hostile invocation was under
    // way (within its 3 s limit after it said it started).
    const latencies = healthyIds.map((id) => healthy.acceptedOnce(id)!.arrivedAt - sentAt.get(id)!);
    expect(Math.max(...latencies)).toBeLessThan(1_000);
    const invocations = starts.callsTo('/started').map((call) => call.arrivedAt);
    expect(invocations.length).toBeGreaterThanOrEqual(2);
    const during = healthyIds.filter((id) => {
      const arrivedAt = healthy.acceptedOnce(id)!.arrivedAt;
      return invocations.some((startedAt) => arrivedAt > startedAt && arrivedAt < startedAt + 3_000);
    });
    expect(during.length).toBeGreaterThan(3);

    // The functions' own outcomes: the spinning message retried as a timeout, the hoarding one discarded.
    const spinOutcome = (await outcomesOf(t, source, spinnerId, [spinning.messageId])).get(
      spinning.messageId,
    );
    expect(spinOutcome).toEqual({ outcome: 'retried', detail: 'function_timeout: exceeded 3000 ms' });
    const { value: hoardOutcome } = await pollUntil('the hoarding message is discarded', 20_000, async () => {
      const outcome = (await outcomesOf(t, source, hoarderId, [hoarding.messageId])).get(hoarding.messageId);
      return outcome?.outcome === 'discarded' ? outcome : undefined;
    });
    expect(hoardOutcome).toEqual({ outcome: 'discarded', detail: 'function_memory_exceeded' });
  }, 60_000);
});
