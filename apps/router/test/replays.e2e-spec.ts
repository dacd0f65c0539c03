// Replays (docs/tracking-api.md §12.4) end to end: a destination created after the messages were sent, still disabled,
// is filled with the log's history through the Config API; `end_time` bounds it; bad input is a 400.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { TRACKING_LOG, type TrackingLog } from '@tributary/event-log';
import { replayConsumerName } from '@tributary/routing';
import { configApi } from '../../../test/support/config-api.client';
import {
  auditEvents,
  createFilter,
  createWebhookDestination,
  destinationName,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  WebhookReceiver,
} from './router-e2e.kit';

describe('replays end to end', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    for (const receiver of receivers) await receiver.close();
  });

  async function startReceiver(secret: string): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start({ secret });
    receivers.push(receiver);
    return receiver;
  }

  const replaysPath = (slug: string) => `${destinationName(source, slug)}/replays`;

  async function waitForReplay(slug: string, replayName: string): Promise<any> {
    const replayId = replayName.split('/').pop();
    const { value } = await pollUntil(`replay ${replayId} finishes`, 15_000, async () => {
      const response = await configApi(t, 'GET', `${replaysPath(slug)}/${replayId}`);
      expect(response.status).toBe(200);
      return response.body.state === 'RUNNING' ? undefined : response.body;
    });
    return value;
  }

  // Messages sent before any destination exists: only a replay can deliver them.
  let startTime: string;
  let firstBatch: Record<string, any>[];
  let secondBatch: Record<string, any>[];
  let between: string;

  beforeAll(async () => {
    startTime = new Date(Date.now() - 1_000).toISOString();
    firstBatch = Array.from({ length: 8 }, (_, index) =>
      trackMessage({
        event: `Before ${index}`,
        integrations: { Webhooks: false, Mixpanel: true },
        context: { consent: { categoryPreferences: { ads: false } } },
      }),
    );
    await sendBatch(t, source, firstBatch);
    await sleep(50);
    between = new Date().toISOString();
    await sleep(50);
    secondBatch = Array.from({ length: 4 }, (_, index) => trackMessage({ event: `After ${index}` }));
    await sendBatch(t, source, secondBatch);
  });

  it('fills a disabled destination created afterwards, replacing integrations, and records it in the audit trail', async () => {
    const receiver = await startReceiver('replayed');
    const created = await createWebhookDestination(t, source, 'webhooks', receiver, 'replayed', {
      enabled: false,
    });
    expect(created.enabled).toBe(false);

    const response = await configApi(t, 'POST', replaysPath('webhooks'), { start_time: startTime });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: expect.stringMatching(new RegExp(`^${replaysPath('webhooks')}/rp_`)),
      state: 'RUNNING',
      end_time: null,
    });
    const finished = await waitForReplay('webhooks', response.body.name);
    const all = [...firstBatch, ...secondBatch];
    expect(finished).toMatchObject({
      state: 'COMPLETED',
      counts: { delivered: all.length, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 },
      failure_reason: null,
      finish_time: expect.any(String),
    });

    expect(receiver.requests.map((request) => request.messageId).sort()).toEqual(
      all.map((message) => message.messageId).sort(),
    );
    for (const request of receiver.requests) {
      expect(request.signatureValid).toBe(true);
      // Replaced, whatever the original said (the first batch had turned Webhooks off).
      expect(request.body.integrations).toEqual({ All: false, Webhooks: true });
    }
    // The consent object is kept.
    expect(receiver.acceptedOnce(firstBatch[0].messageId)!.body.context.consent).toEqual({
      categoryPreferences: { ads: false },
    });

    const trail = await auditEvents(t, source, replaysPath('webhooks'));
    expect(trail.map((entry) => entry.type)).toEqual([
      'DestinationReplayFinished',
      'DestinationReplayRequested',
    ]);
    expect(trail[1].actor).not.toBe('system:router');
    expect(trail[0]).toMatchObject({ actor: 'system:router' });

    // The destination is still disabled: a message sent now does not reach it.
    const later = trackMessage({ event: 'After The Replay' });
    await sendBatch(t, source, [later]);
    await sleep(300);
    expect(receiver.requests.some((request) => request.messageId === later.messageId)).toBe(false);
  });

  it('stops at end_time, and destination filters still apply', async () => {
    const receiver = await startReceiver('bounded');
    await createWebhookDestination(t, source, 'webhooks-bounded', receiver, 'bounded', { enabled: false });
    await createFilter(t, source, 'webhooks-bounded', {
      title: 'Drop Before 0',
      if: "event = 'Before 0'",
      enabled: true,
      actions: [{ type: 'drop_event' }],
    });
    const response = await configApi(t, 'POST', replaysPath('webhooks-bounded'), {
      replay: { start_time: startTime, end_time: between },
    });
    expect(response.status).toBe(200);
    expect(response.body.end_time).toBe(new Date(between).toISOString());
    const finished = await waitForReplay('webhooks-bounded', response.body.name);
    expect(finished).toMatchObject({
      state: 'COMPLETED',
      counts: { delivered: firstBatch.length - 1, filtered: 1, skipped: 0 },
    });
    expect(receiver.requests.map((request) => request.messageId).sort()).toEqual(
      firstBatch
        .slice(1)
        .map((message) => message.messageId)
        .sort(),
    );
  });

  it('answers 400 code 3 to bad replay input and records nothing', async () => {
    const receiver = await startReceiver('bad-input');
    await createWebhookDestination(t, source, 'webhooks-bad-input', receiver, 'bad-input', {
      enabled: false,
    });
    const now = Date.now();
    const bad: [string, unknown][] = [
      ['missing start_time', {}],
      ['empty start_time', { start_time: '' }],
      ['start_time not a time', { start_time: 'yesterday' }],
      [
        'end before start',
        { start_time: new Date(now - 60_000).toISOString(), end_time: new Date(now - 120_000).toISOString() },
      ],
      [
        'end equal to start',
        { start_time: new Date(now - 60_000).toISOString(), end_time: new Date(now - 60_000).toISOString() },
      ],
      ['future start', { start_time: new Date(now + 3_600_000).toISOString() }],
      ['start_time a number', { start_time: 12 }],
    ];
    for (const [why, body] of bad) {
      const response = await configApi(t, 'POST', replaysPath('webhooks-bad-input'), body);
      expect({ why, status: response.status, code: response.body?.code }).toEqual({
        why,
        status: 400,
        code: 3,
      });
      expect(response.body.error).toEqual(expect.any(String));
    }
    const listing = await configApi(t, 'GET', replaysPath('webhooks-bad-input'));
    expect(listing.body.replays).toEqual([]);
    const missing = await configApi(t, 'GET', `${replaysPath('webhooks-bad-input')}/rp_nope`);
    expect(missing.status).toBe(404);
    expect(receiver.requests).toEqual([]);
  });
});

// A replay's sent messages wait for their outcomes' checkpoint, then for their acks' confirmation:
// it holds `REPLAY_SETTLING_ROOM` messages more than it sends at once, so those waits do not take
// places from the destination's requests, which still number at most ROUTER_MAX_IN_FLIGHT at once.
describe('replays: what a replay holds and what it sends at once', () => {
  const MAX_IN_FLIGHT = 4;
  let t: TributaryTestInstance;
  let source: TestSource;
  let slow: WebhookReceiver;

  beforeAll(async () => {
    t = await startTributary({
      environment: { ...POLLING_ENVIRONMENT, ROUTER_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) },
    });
    source = await createWorkspaceAndSource(t);
    slow = await WebhookReceiver.start({ secret: 'held', delayMs: 100 });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await slow?.close();
  });

  it('holds more messages than it sends, and the destination never gets more than its limit at once', async () => {
    const startTime = new Date(Date.now() - 1_000).toISOString();
    const messages = Array.from({ length: 40 }, (_, index) => trackMessage({ properties: { index } }));
    await sendBatch(t, source, messages);
    await createWebhookDestination(t, source, 'webhooks', slow, 'held', { enabled: false });
    const replays = `${destinationName(source, 'webhooks')}/replays`;
    const requested = await configApi(t, 'POST', replays, { start_time: startTime });
    expect(requested.status).toBe(200);
    const replayId = (requested.body.name as string).split('/').pop()!;

    // 40 messages, 4 at a time and 100 ms each, take a second at the destination.
    const log = t.app.get<symbol, TrackingLog>(TRACKING_LOG, { strict: false });
    let mostHeld = 0;
    const finished = await pollUntil('the replay finishes', 20_000, async () => {
      const lag = await log.consumerLag(replayConsumerName(replayId)).catch(() => undefined);
      if (lag) mostHeld = Math.max(mostHeld, lag.unacknowledged);
      const replay = await configApi(t, 'GET', `${replays}/${replayId}`);
      return replay.body.state === 'RUNNING' ? undefined : replay.body;
    });
    expect(finished.value).toMatchObject({
      state: 'COMPLETED',
      counts: { delivered: messages.length, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 },
    });
    for (const message of messages) expect(slow.acceptedOnce(message.messageId)).toBeDefined();
    expect(slow.mostAtOnce).toBe(MAX_IN_FLIGHT);
    expect(mostHeld).toBeGreaterThan(MAX_IN_FLIGHT);
  }, 40_000);
});
