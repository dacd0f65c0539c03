// Destination functions delivering tracked messages (docs/functions.md §2): each row of the outcome
// table through a real server, its router, the function runner's worker process and a loopback
// receiver the function calls with `fetch`.
import { workspaceName } from '@tributary/contracts';
import { configApi, ConfigApiClient, createWorkspaceWithTokens } from '../support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import {
  createSource,
  createWorkspaceAndSource,
  pollUntil,
  type TestSource,
} from '../support/tracking-e2e.kit';
import {
  deliveryMetrics,
  destinationName,
  sendBatch,
  trackMessage,
} from '../../apps/router/test/router-e2e.kit';
import {
  createFunction,
  createFunctionDestination,
  FetchReceiver,
  FUNCTION_ENVIRONMENT,
  MEMORY_BOMB,
  outcomesOf,
  type MessageOutcome,
} from './functions-e2e.kit';

const RELAY = `
async function onTrack(event, settings) {
  switch (event.event) {
    case 'Unsupported': throw new EventNotSupported('not this event');
    case 'Invalid': throw new ValidationError('the order has no total');
    case 'Later': throw new RetryError('the vendor is busy');
    case 'Broken': return event.properties.missing.field;
  }
  console.log('relaying', event.messageId);
  const response = await fetch(settings.endpoint + '/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': settings.apiKey },
    body: JSON.stringify({ id: event.messageId, name: event.event, user: event.userId, props: event.properties }),
  });
  if (response.status >= 500 || response.status === 429) throw new RetryError('HTTP ' + response.status);
  if (!response.ok) throw new ValidationError('HTTP ' + response.status);
  return response.status;
}
`;

/** Sends each gathered call as one request, and answers per event as the receiver's vendor would. */
const BATCHER = `
async function onBatch(events, settings) {
  console.log('sending', events.length);
  const response = await fetch(settings.endpoint + '/batch', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(events.map((event) => ({ id: event.messageId, type: event.type, name: event.event }))),
  });
  if (!response.ok) throw new RetryError('HTTP ' + response.status);
  return events.map((event) => {
    if (event.event === 'Refused') return { status: 400, errormessage: 'the vendor refused ' + event.messageId };
    if (event.event === 'Busy') return { status: 503, errormessage: 'the vendor is busy' };
    return { status: 200 };
  });
}
async function onTrack(event) { throw new Error('onTrack is not called when onBatch is declared'); }
`;

/** Refuses every call whole. */
const REFUSER = `async function onBatch(events) { throw new ValidationError(events.length + ' events refused'); }`;

const STUCK = `async function onTrack(event) { while (true) {} }`;
const GREEDY = `async function onTrack(event) { ${MEMORY_BOMB} }`;

describe('destination functions', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  /** Sources of their own for the stuck and the greedy function: each gets only its one message. */
  let stuckSource: TestSource;
  let greedySource: TestSource;
  /** Sources of their own for the onBatch functions. */
  let batchSource: TestSource;
  let refuserSource: TestSource;
  let batcherId: string;
  let refuserId: string;
  let receiver: FetchReceiver;
  let relayId: string;
  let stuckId: string;
  let greedyId: string;

  beforeAll(async () => {
    t = await startTributary({ environment: { ...FUNCTION_ENVIRONMENT, RETRY_WINDOW: '3s' } });
    source = await createWorkspaceAndSource(t);
    receiver = await FetchReceiver.start();
    relayId = await createFunction(t, source.workspaceSlug, 'DESTINATION', RELAY, [
      { name: 'endpoint', required: true },
      { name: 'apiKey', required: true, sensitive: true },
    ]);
    stuckId = await createFunction(t, source.workspaceSlug, 'DESTINATION', STUCK);
    greedyId = await createFunction(t, source.workspaceSlug, 'DESTINATION', GREEDY);
    await createFunctionDestination(t, source, relayId, { endpoint: receiver.url, apiKey: 'k-123' });
    stuckSource = await createSource(t, { slug: source.workspaceSlug, id: source.workspaceId });
    greedySource = await createSource(t, { slug: source.workspaceSlug, id: source.workspaceId });
    await createFunctionDestination(t, stuckSource, stuckId);
    await createFunctionDestination(t, greedySource, greedyId);
    batcherId = await createFunction(t, source.workspaceSlug, 'DESTINATION', BATCHER, [
      { name: 'endpoint', required: true },
    ]);
    refuserId = await createFunction(t, source.workspaceSlug, 'DESTINATION', REFUSER);
    batchSource = await createSource(t, { slug: source.workspaceSlug, id: source.workspaceId });
    refuserSource = await createSource(t, { slug: source.workspaceSlug, id: source.workspaceId });
    await createFunctionDestination(t, batchSource, batcherId, { endpoint: receiver.url });
    await createFunctionDestination(t, refuserSource, refuserId);
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await receiver?.close();
  });

  async function settledOutcomes(
    destinationSlug: string,
    messageIds: string[],
    timeoutMs = 20_000,
    of: TestSource = source,
  ): Promise<Map<string, MessageOutcome>> {
    return settledOutcomesOf(of, destinationSlug, messageIds, timeoutMs);
  }

  async function settledOutcomesOf(
    of: TestSource,
    destinationSlug: string,
    messageIds: string[],
    timeoutMs = 20_000,
  ): Promise<Map<string, MessageOutcome>> {
    const { value } = await pollUntil(
      `${messageIds.length} final outcomes at ${destinationSlug}`,
      timeoutMs,
      async () => {
        const outcomes = await outcomesOf(t, of, destinationSlug, messageIds);
        const final = messageIds.every((id) => {
          const outcome = outcomes.get(id)?.outcome;
          return outcome !== undefined && outcome !== 'retried';
        });
        return final ? outcomes : undefined;
      },
    );
    return value;
  }

  it('delivers through fetch with its settings, and maps every outcome of the table', async () => {
    const delivered = trackMessage({ event: 'Order Completed', properties: { total: 42 } });
    const identify = {
      type: 'identify',
      messageId: `e2e-identify-${Date.now()}`,
      userId: 'user-1',
      traits: { plan: 'pro' },
    };
    const unsupported = trackMessage({ event: 'Unsupported' });
    const invalid = trackMessage({ event: 'Invalid' });
    const broken = trackMessage({ event: 'Broken' });
    const later = trackMessage({ event: 'Later' });
    await sendBatch(t, source, [delivered, identify, unsupported, invalid, broken, later]);

    const outcomes = await settledOutcomes(relayId, [
      delivered.messageId,
      identify.messageId,
      unsupported.messageId,
      invalid.messageId,
      broken.messageId,
    ]);
    expect(outcomes.get(delivered.messageId)).toMatchObject({ outcome: 'delivered' });
    const calls = receiver.callsTo('/orders');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers['x-api-key']).toBe('k-123');
    expect(calls[0]!.body).toEqual({
      id: delivered.messageId,
      name: 'Order Completed',
      user: 'user-1',
      props: { total: 42 },
    });
    // No handler for the type, and EventNotSupported: filtered.
    expect(outcomes.get(identify.messageId)).toMatchObject({ outcome: 'filtered' });
    expect(outcomes.get(unsupported.messageId)).toMatchObject({
      outcome: 'filtered',
      detail: expect.stringContaining('EventNotSupported: not this event'),
    });
    expect(outcomes.get(invalid.messageId)).toMatchObject({
      outcome: 'discarded',
      detail: 'ValidationError: the order has no total',
    });
    expect(outcomes.get(broken.messageId)).toMatchObject({
      outcome: 'discarded',
      detail: expect.stringMatching(/^TypeError: /),
    });

    // RetryError: retried with the router's backoff until the 3 s window ends, then dead-lettered.
    const { value: letters } = await pollUntil(
      'the RetryError message is dead-lettered',
      20_000,
      async () => {
        const response = await configApi(t, 'GET', `${destinationName(source, relayId)}/dead-letters`);
        expect(response.status).toBe(200);
        return response.body.dead_letters.length > 0 ? response.body.dead_letters : undefined;
      },
    );
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      message_id: later.messageId,
      reason: expect.stringMatching(/^retries exhausted after \d+ attempts: RetryError: the vendor is busy$/),
    });
    expect(letters[0].attempts.length).toBeGreaterThan(1);
  }, 60_000);

  it('retries an invocation past its time limit, and discards one past its memory limit', async () => {
    const stuck = trackMessage({ event: 'Spin' });
    const greedy = trackMessage({ event: 'Hoard' });
    await sendBatch(t, stuckSource, [stuck]);
    await sendBatch(t, greedySource, [greedy]);

    const { value: stuckOutcome } = await pollUntil('the stuck invocation is retried', 15_000, async () => {
      const outcome = (await outcomesOf(t, stuckSource, stuckId, [stuck.messageId])).get(stuck.messageId);
      return outcome?.outcome === 'retried' ? outcome : undefined;
    });
    expect(stuckOutcome.detail).toMatch(/^function_timeout: exceeded 3000 ms$/);

    const greedyOutcome = (await settledOutcomes(greedyId, [greedy.messageId], 20_000, greedySource)).get(
      greedy.messageId,
    );
    expect(greedyOutcome).toEqual({ outcome: 'discarded', detail: 'function_memory_exceeded' });

    // The timeout is retried within the window and then dead-lettered, like any retry.
    const { value: letters } = await pollUntil('the stuck message is dead-lettered', 30_000, async () => {
      const response = await configApi(t, 'GET', `${destinationName(stuckSource, stuckId)}/dead-letters`);
      return response.body.dead_letters?.length > 0 ? response.body.dead_letters : undefined;
    });
    expect(letters[0]).toMatchObject({
      message_id: stuck.messageId,
      reason: expect.stringContaining('function_timeout'),
    });
  }, 60_000);

  it('gathers the messages of a function with onBatch into its calls, one outcome per event', async () => {
    const plain = Array.from({ length: 10 }, (_, index) => trackMessage({ event: `Order ${index}` }));
    const identify = { type: 'identify', messageId: `e2e-identify-${Date.now()}`, userId: 'user-1' };
    const refused = trackMessage({ event: 'Refused' });
    const busy = trackMessage({ event: 'Busy' });
    await sendBatch(t, batchSource, [...plain, identify, refused, busy]);
    const settledIds = [...plain, identify, refused].map((message) => message.messageId);

    const outcomes = await settledOutcomesOf(batchSource, batcherId, settledIds);
    for (const message of [...plain, identify]) {
      expect(outcomes.get(message.messageId)).toMatchObject({ outcome: 'delivered' });
    }
    expect(outcomes.get(refused.messageId)).toMatchObject({
      outcome: 'discarded',
      detail: `the vendor refused ${refused.messageId}`,
    });
    // Every type goes to onBatch (onTrack would have thrown), in fewer calls than messages.
    const firstCalls = receiver.callsTo('/batch');
    const received = firstCalls.flatMap((call) => call.body as { id: string; type: string }[]);
    expect(new Set(received.map((event) => event.id))).toEqual(new Set([...settledIds, busy.messageId]));
    expect(received.find((event) => event.id === identify.messageId)).toMatchObject({ type: 'identify' });
    expect(firstCalls.length).toBeLessThan(13);

    // 503: retried alone, with the router's backoff, until the 3 s window ends, then dead-lettered.
    const { value: letters } = await pollUntil('the busy message is dead-lettered', 20_000, async () => {
      const response = await configApi(t, 'GET', `${destinationName(batchSource, batcherId)}/dead-letters`);
      return response.body.dead_letters?.length > 0 ? response.body.dead_letters : undefined;
    });
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      message_id: busy.messageId,
      reason: expect.stringMatching(/^retries exhausted after \d+ attempts: the vendor is busy$/),
    });
    const calls = receiver.callsTo('/batch');
    for (const retry of calls.slice(firstCalls.length)) {
      expect(retry.body).toEqual([{ id: busy.messageId, type: 'track', name: 'Busy' }]);
    }

    // The destination's own metrics count each message by its own outcome.
    const { counts } = await deliveryMetrics(t, batchSource, batcherId);
    expect(counts).toMatchObject({ delivered: 11, discarded: 1, dead_lettered: 1 });
    expect(counts.retried).toBeGreaterThan(0);

    // One invocation per call, each counted once; its logs name the instance, no one message.
    const metrics = await configApi(
      t,
      'GET',
      `${workspaceName(source.workspaceSlug)}/functions/${batcherId}/metrics`,
    );
    expect(metrics.body).toMatchObject({
      invocations: calls.length,
      outcomes: { success: calls.length, discarded: 0, retried: 0 },
    });
    const logs = await configApi(
      t,
      'GET',
      `${workspaceName(source.workspaceSlug)}/functions/${batcherId}/logs`,
    );
    expect(logs.body.logs.length).toBeGreaterThanOrEqual(calls.length);
    expect(logs.body.logs[0]).toMatchObject({
      message: expect.stringMatching(/^sending \d+$/),
      instance: destinationName(batchSource, batcherId),
    });
    expect(logs.body.logs[0].message_id ?? '').toBe('');
  }, 60_000);

  it('gives every message of a call what an onBatch throw means', async () => {
    const messages = [
      trackMessage(),
      trackMessage(),
      { type: 'page', messageId: `e2e-page-${Date.now()}`, userId: 'u' },
    ];
    await sendBatch(t, refuserSource, messages);
    const ids = messages.map((message) => message.messageId);
    const outcomes = await settledOutcomesOf(refuserSource, refuserId, ids);
    for (const id of ids) {
      expect(outcomes.get(id)).toMatchObject({
        outcome: 'discarded',
        detail: expect.stringMatching(/^ValidationError: \d events refused$/),
      });
    }
    const metrics = await configApi(
      t,
      'GET',
      `${workspaceName(source.workspaceSlug)}/functions/${refuserId}/metrics`,
    );
    expect(metrics.body.invocations).toBeLessThan(ids.length);
    expect(metrics.body.outcomes.discarded).toBe(metrics.body.invocations);
  }, 60_000);

  it("reports the Public API's batchMaxCount: 100 for code that declares onBatch, else 0", async () => {
    const access = await createWorkspaceWithTokens(new ConfigApiClient(t), `fn-batch-${process.pid}`);
    const publicApi = async (code: string) => {
      const response = await fetch(`${t.baseUrl}/public-api/functions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${access.writerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ code, displayName: `Batch ${code.length}`, resourceType: 'DESTINATION' }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as any).data.function;
    };
    expect(await publicApi(BATCHER)).toMatchObject({ batchMaxCount: 100 });
    expect(await publicApi(RELAY)).toMatchObject({ batchMaxCount: 0 });
  });
});
