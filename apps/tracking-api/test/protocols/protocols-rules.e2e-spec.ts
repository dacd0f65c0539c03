// Protocols rule by rule (docs/protocols.md R0–R20) through the real HTTP APIs: the plan is created,
// connected and configured with the Config API, messages are sent with @segment/analytics-node, and
// the assertions read the source's log, the forwarding sources' logs and the violations route.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createSource,
  createWorkspace,
  deleteSource,
  pollUntil,
  postJson,
} from '../../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../../test/support/tributary-test-instance';
import { SEGMENT_UI_PLAN_RULES } from '../../../../libs/protocols/src/testing/segment-ui-plan.fixture';
import { createWebhookDestination, WebhookReceiver } from '../../../router/test/router-e2e.kit';
import {
  connectPlan,
  createPlan,
  disconnectPlan,
  eventRule,
  patchSchemaConfig,
  plannedSource,
  sendWithAnalyticsNode,
  setSchemaConfig,
  storedPayloads,
  violationsOf,
} from './protocols-e2e.kit';

const subscriptionPlan = {
  events: [eventRule('Subscription Started', { subscription_id: { type: 'string' } }, ['subscription_id'])],
};
const requiredSubscriptionId = {
  type: 'Required',
  field: 'properties.subscription_id',
  description: 'properties.subscription_id is required',
};

// Each case makes a workspace, sources and a plan, sends, and reads several logs back: generous on a
// loaded machine.
jest.setTimeout(90_000);

describe('Protocols at ingestion, rule by rule (HTTP, analytics-node)', () => {
  let t: TributaryTestInstance;
  const id = () => randomUUID();

  beforeAll(async () => {
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('R0: a source with no plan stores messages unchanged, whatever its schema config says', async () => {
    const workspace = await createWorkspace(t);
    const source = await createSource(t, workspace);
    const other = await createSource(t, workspace);
    // A plan exists in the workspace, but is connected to another source.
    const { planId } = await createPlan(t, workspace.slug, subscriptionPlan);
    await connectPlan(t, other, planId);
    await setSchemaConfig(t, source, {
      allow_unplanned_track_events: false,
      allow_track_event_on_violations: false,
      common_track_event_on_violations: 'BLOCK',
    });
    const messageId = id();
    const statuses = await sendWithAnalyticsNode(t, source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Anything', properties: { x: 1 }, messageId }),
    );
    expect(statuses).toEqual([200]);
    const stored = (await storedPayloads(t, source)).get(messageId)!;
    expect(stored.properties).toEqual({ x: 1 });
    expect(stored.context.protocols).toBeUndefined();
    expect((await violationsOf(t, source)).body).toMatchObject({ total_violations: 0, total_blocked: 0 });
  });

  it('R1: every message of a batch is judged alone, after request validation, and the answer stays 200', async () => {
    const { source } = await plannedSource(t, subscriptionPlan, {
      allow_unplanned_track_events: false,
      allow_unplanned_track_event_properties: false,
    });
    const [blocked, omitted, clean] = [id(), id(), id()];
    const statuses = await sendWithAnalyticsNode(t, source.writeKey, (analytics) => {
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: blocked });
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's', extra: 1 },
        messageId: omitted,
      });
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's' },
        messageId: clean,
      });
    });
    expect(statuses).toEqual([200]);
    const stored = await storedPayloads(t, source);
    expect([...stored.keys()].sort()).toEqual([omitted, clean].sort());
    expect(stored.get(omitted)!.properties).toEqual({ subscription_id: 's' });
    expect(stored.get(clean)!.context.protocols).toBeUndefined();
    // Request validation comes first: a track without an event is a 400, not a Protocols verdict.
    const invalid = await postJson(t, '/v1/track', { userId: 'u', messageId: id() }, source.writeKey);
    expect(invalid.status).toBe(400);
    // A blocked single-event request is still a 200.
    const single = await postJson(
      t,
      '/v1/track',
      { userId: 'u', event: 'Unplanned', messageId: id() },
      source.writeKey,
    );
    expect(single.status).toBe(200);
    expect(single.body).toEqual({ success: true });
  });

  it('R2: the version in context.protocols.event_version picks the entry, else the lowest version', async () => {
    const { source } = await plannedSource(t, {
      events: [eventRule('Order', {}, ['a'], 1), eventRule('Order', {}, ['b'], 2)],
    });
    const [v2, v32, none] = [id(), id(), id()];
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Order',
        properties: { b: 1 },
        context: { protocols: { event_version: 2 } },
        messageId: v2,
      });
      analytics.track({
        userId: 'u',
        event: 'Order',
        properties: { b: 1 },
        context: { protocols: { event_version: 3.2 } },
        messageId: v32,
      });
      analytics.track({ userId: 'u', event: 'Order', properties: { b: 1 }, messageId: none });
    });
    const stored = await storedPayloads(t, source);
    expect(stored.get(v2)!.context.protocols).toEqual({ event_version: 2 });
    const missingA = [{ type: 'Required', field: 'properties.a', description: 'properties.a is required' }];
    expect(stored.get(v32)!.context.protocols).toEqual({
      event_version: 3.2,
      sourceId: source.sourceId,
      violations: missingA,
    });
    expect(stored.get(none)!.context.protocols).toEqual({ sourceId: source.sourceId, violations: missingA });
  });

  it('R3: an unplanned event is blocked as unplanned, counted as blocked, and is no violation', async () => {
    const planned = await plannedSource(
      t,
      subscriptionPlan,
      { allow_unplanned_track_events: false },
      { forward: true },
    );
    const messageId = id();
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Not In Plan', messageId }),
    );
    expect((await storedPayloads(t, planned.source)).size).toBe(0);
    const summary = (await violationsOf(t, planned.source)).body;
    expect(summary).toMatchObject({ total_violations: 0, total_blocked: 1, violations: [] });
    expect(summary.blocked.unplanned).toBe(1);
    expect((await storedPayloads(t, planned.violationsTarget)).size).toBe(0);
    const metrics = await (await fetch(t.metricsUrl)).text();
    expect(metrics).toContain(
      `tributary_protocols_blocked_messages_total{source_id="${planned.source.sourceId}",reason="unplanned"} 1`,
    );
    expect(metrics).not.toContain(
      `tributary_protocols_violations_total{source_id="${planned.source.sourceId}"`,
    );
    expect((await storedPayloads(t, planned.blockedTarget)).get(messageId)!.context.protocols).toEqual({
      sourceId: planned.source.sourceId,
      violations: [],
      blocked_reason: 'unplanned',
    });
  });

  it('R4: the event schema checks the whole message; identify, group and page use their own rules', async () => {
    const { source } = await plannedSource(t, {
      events: [
        {
          name: 'Checked',
          version: 1,
          rules: { type: 'object', properties: { userId: { type: 'string', pattern: '^user-' } } },
        },
        eventRule('Page Viewed', { path: { type: 'string' } }, ['path']),
      ],
      identify: {
        type: 'object',
        properties: {
          traits: { type: 'object', properties: { email: { type: 'string', format: 'email' } } },
        },
      },
      group: { type: 'object', properties: { traits: { type: 'object', required: ['name'] } } },
    });
    const [track, identify, group, page] = [id(), id(), id(), id()];
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) => {
      analytics.track({ userId: 'nobody', event: 'Checked', messageId: track });
      analytics.identify({ userId: 'user-1', traits: { email: 'nope' }, messageId: identify });
      analytics.group({ userId: 'user-1', groupId: 'g', traits: { seats: 2 }, messageId: group });
      analytics.page({ userId: 'user-1', name: 'Home', properties: {}, messageId: page });
    });
    const stored = await storedPayloads(t, source);
    const fields = (messageId: string) =>
      stored
        .get(messageId)!
        .context.protocols.violations.map((violation: any) => `${violation.type}:${violation.field}`);
    expect(fields(track)).toEqual(['Pattern:userId']);
    expect(fields(identify)).toEqual(['Format:traits.email']);
    expect(fields(group)).toEqual(['Required:traits.name']);
    expect(fields(page)).toEqual(['Required:properties.path']);
  });

  it('R5: unplanned properties are removed into omitted and are not violations', async () => {
    const { source } = await plannedSource(t, subscriptionPlan, {
      allow_unplanned_track_event_properties: false,
    });
    const messageId = id();
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) =>
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's1', subscription_name: 'Pro' },
        messageId,
      }),
    );
    const stored = (await storedPayloads(t, source)).get(messageId)!;
    expect(stored.properties).toEqual({ subscription_id: 's1' });
    expect(stored.context.protocols).toEqual({ sourceId: source.sourceId, omitted: ['subscription_name'] });
    expect((await violationsOf(t, source)).body.total_violations).toBe(0);
  });

  it('R6: unplanned traits of identify and group are removed', async () => {
    const { source } = await plannedSource(
      t,
      {
        events: [],
        identify: {
          type: 'object',
          properties: { traits: { type: 'object', properties: { name: {}, email: {}, join_date: {} } } },
        },
      },
      { allow_unplanned_identify_traits: false, allow_unplanned_group_traits: false },
    );
    const [identify, group] = [id(), id()];
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) => {
      analytics.identify({
        userId: 'u',
        traits: { email: 'a@b.co', first_name: 'Ada' },
        messageId: identify,
      });
      analytics.group({ userId: 'u', groupId: 'g', traits: { seats: 4 }, messageId: group });
    });
    const stored = await storedPayloads(t, source);
    expect(stored.get(identify)!.traits).toEqual({ email: 'a@b.co' });
    expect(stored.get(identify)!.context.protocols.omitted).toEqual(['first_name']);
    // No rules.group: every trait is unplanned.
    expect(stored.get(group)!.traits).toEqual({});
    expect(stored.get(group)!.context.protocols.omitted).toEqual(['seats']);
  });

  it('R7: a failing track is blocked, or keeps only its valid properties, as the flags say', async () => {
    const blocking = await plannedSource(t, subscriptionPlan, { allow_track_event_on_violations: false });
    const omitting = await plannedSource(
      t,
      {
        events: [
          eventRule(
            'Subscription Started',
            { subscription_id: { type: 'string' }, seats: { type: 'integer' } },
            ['subscription_id'],
          ),
        ],
      },
      { allow_track_properties_on_violations: false },
    );
    const [blocked, kept, omitted] = [id(), id(), id()];
    await sendWithAnalyticsNode(t, blocking.source.writeKey, (analytics) =>
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { customer_type: 'enterprise' },
        messageId: blocked,
      }),
    );
    await sendWithAnalyticsNode(t, omitting.source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { customer_type: 'enterprise' },
        messageId: kept,
      });
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's', seats: 'many', ok: 1 },
        messageId: omitted,
      });
    });
    expect((await storedPayloads(t, blocking.source)).size).toBe(0);
    expect((await violationsOf(t, blocking.source)).body.blocked.schema_violation).toBe(1);
    const stored = await storedPayloads(t, omitting.source);
    // Required-missing removes nothing.
    expect(stored.get(kept)!.properties).toEqual({ customer_type: 'enterprise' });
    expect(stored.get(kept)!.context.protocols.violations).toEqual([requiredSubscriptionId]);
    expect(stored.get(omitted)!.properties).toEqual({ subscription_id: 's', ok: 1 });
    expect(stored.get(omitted)!.context.protocols.omitted_on_violation).toEqual(['seats']);
  });

  it('R8: the common schema blocks under BLOCK and reports under ALLOW, after the event rules', async () => {
    const global = {
      type: 'object',
      properties: {
        context: {
          type: 'object',
          properties: { device: { type: 'object', required: ['advertisingId'] } },
          required: ['device'],
        },
      },
    };
    const blocking = await plannedSource(
      t,
      { ...subscriptionPlan, global },
      { common_track_event_on_violations: 'BLOCK' },
    );
    const allowing = await plannedSource(t, { ...subscriptionPlan, global }, {});
    const [blocked, unplannedBlocked, allowed, page] = [id(), id(), id(), id()];
    await sendWithAnalyticsNode(t, blocking.source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's' },
        messageId: blocked,
      });
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: unplannedBlocked });
      // Page: reported only, never blocked.
      analytics.page({ userId: 'u', name: 'Home', messageId: page });
    });
    await sendWithAnalyticsNode(t, allowing.source.writeKey, (analytics) =>
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's' },
        context: { device: {} },
        messageId: allowed,
      }),
    );
    const blockedLog = await storedPayloads(t, blocking.source);
    expect([...blockedLog.keys()]).toEqual([page]);
    expect(blockedLog.get(page)!.context.protocols.violations[0]).toMatchObject({
      type: 'Required',
      field: 'context.device',
    });
    expect((await violationsOf(t, blocking.source)).body.blocked).toMatchObject({
      common_schema_violation: 1,
      unplanned_and_schema_violation: 1,
    });
    expect((await storedPayloads(t, allowing.source)).get(allowed)!.context.protocols.violations).toEqual([
      {
        type: 'Required',
        field: 'context.device.advertisingId',
        description: 'context.device.advertisingId is required',
      },
    ]);
  });

  it('R9/R10: violation records and the annotation keep the client keys of context.protocols', async () => {
    const { source } = await plannedSource(t, {
      events: [eventRule('Plan Chosen', { plan: { enum: ['free', 'pro'] }, seats: { type: 'integer' } })],
    });
    const messageId = id();
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) =>
      analytics.track({
        userId: 'u',
        event: 'Plan Chosen',
        properties: { plan: 'gold', seats: 'ten' },
        context: { protocols: { event_version: 1, sourceId: 'forged', omitted: ['forged'] } },
        messageId,
      }),
    );
    const stored = (await storedPayloads(t, source)).get(messageId)!;
    expect(stored.context.protocols).toEqual({
      event_version: 1,
      sourceId: source.sourceId,
      violations: [
        {
          type: 'Enum',
          field: 'properties.plan',
          description: 'properties.plan must be one of the following: "free", "pro"',
        },
        {
          type: 'Invalid Type',
          field: 'properties.seats',
          description: 'Invalid type. Expected: integer, given: string',
        },
      ],
    });
    expect(stored.context.library.name).toBe('@segment/analytics-node');
  });

  it('R11/R12: blocked messages and violations go to the forwarding sources, exactly as specified', async () => {
    const planned = await plannedSource(
      t,
      subscriptionPlan,
      { allow_track_event_on_violations: false, allow_unplanned_track_event_properties: false },
      { forward: true },
    );
    // The forwarding sources' own plans and schema configs do not apply to forwards.
    const { planId } = await createPlan(t, planned.source.workspaceSlug, subscriptionPlan);
    await connectPlan(t, planned.blockedTarget, planId);
    await setSchemaConfig(t, planned.blockedTarget, { allow_unplanned_track_events: false });
    const [blocked, omittedOnly] = [id(), id()];
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { customer_type: 'enterprise', unplanned: true },
        timestamp: new Date('2026-01-02T03:04:05.678Z'),
        messageId: blocked,
      });
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's', x: 1 },
        messageId: omittedOnly,
      });
    });
    const forwardedBlocked = await storedPayloads(t, planned.blockedTarget);
    expect([...forwardedBlocked.keys()]).toEqual([blocked]);
    const copy = forwardedBlocked.get(blocked)!;
    // The original message, before omission.
    expect(copy.properties).toEqual({ customer_type: 'enterprise', unplanned: true });
    expect(copy.forwardedFromProject).toBe(planned.source.sourceId);
    expect(copy.context.protocols).toEqual({
      sourceId: planned.source.sourceId,
      violations: [requiredSubscriptionId],
      blocked_reason: 'schema_violation',
    });
    const violationTracks = [...(await storedPayloads(t, planned.violationsTarget)).values()];
    expect(violationTracks).toHaveLength(1);
    const [track] = violationTracks;
    expect(track).toMatchObject({
      type: 'track',
      event: 'Violation Generated',
      userId: 'schema-violations',
      integrations: {},
      forwardedFromProject: planned.source.sourceId,
      context: { app: null, library: { name: '@segment/analytics-node' } },
    });
    expect(track.messageId).toMatch(/^sch-[0-9A-Za-z]{27}$/);
    expect(track.properties).toEqual({
      appVersion: '',
      eventMessageID: blocked,
      eventName: 'Subscription Started',
      eventSentAt: expect.stringMatching(/^\d{4}-/),
      eventTimestamp: '2026-01-02T03:04:05.678Z',
      eventType: 'track',
      sourceID: planned.source.sourceId,
      sourceName: planned.source.sourceSlug,
      sourceSlug: planned.source.sourceSlug,
      trackingPlanID: planned.planId,
      trackingPlanName: planned.planName,
      violationType: 'Required',
      violationField: 'properties.subscription_id',
      violationDescription: 'properties.subscription_id is required',
      violations: [requiredSubscriptionId],
      violationCount: 1,
    });
  });

  it('R13/R14: the violations route counts once per messageId, with samples; a resend neither recounts nor re-forwards', async () => {
    const planned = await plannedSource(
      t,
      { events: [eventRule('Paid', { amount: { type: 'number' } }, ['amount'])] },
      { allow_unplanned_track_events: false },
      { forward: true },
    );
    const [allowed, blocked] = [id(), id()];
    const send = () =>
      sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) => {
        analytics.track({ userId: 'u', event: 'Paid', properties: { amount: 'ten' }, messageId: allowed });
        analytics.track({ userId: 'u', event: 'Refunded', messageId: blocked });
      });
    await send();
    await send();
    await send();
    const summary = await violationsOf(t, planned.source, '1h');
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      name: `workspaces/${planned.source.workspaceSlug}/sources/${planned.source.sourceSlug}/violations`,
      window: '1h',
      total_violations: 1,
      total_blocked: 1,
      blocked: {
        unplanned: 1,
        schema_violation: 0,
        common_schema_violation: 0,
        unplanned_and_schema_violation: 0,
      },
    });
    expect(summary.body.violations).toEqual([
      {
        message_type: 'track',
        event_name: 'Paid',
        violation_type: 'Invalid Type',
        field: 'properties.amount',
        description: 'Invalid type. Expected: number, given: string',
        count: 1,
        last_seen: expect.any(String),
        samples: [expect.objectContaining({ messageId: allowed, properties: { amount: 'ten' } })],
      },
    ]);
    for (const window of ['24h', '7d']) {
      expect((await violationsOf(t, planned.source, window)).body.total_violations).toBe(1);
    }
    expect((await storedPayloads(t, planned.violationsTarget)).size).toBe(1);
    expect((await storedPayloads(t, planned.blockedTarget)).size).toBe(1);
    expect((await storedPayloads(t, planned.source)).size).toBe(1);
    const metrics = await (await fetch(t.metricsUrl)).text();
    const sourceLabel = `source_id="${planned.source.sourceId}"`;
    for (const line of [
      `tributary_protocols_forwards_total{${sourceLabel},kind="blocked",outcome="forwarded"} 1`,
      `tributary_protocols_forwards_total{${sourceLabel},kind="violation",outcome="forwarded"} 1`,
      `tributary_protocols_violations_total{${sourceLabel},violation_type="Invalid Type"} 1`,
      `tributary_protocols_blocked_messages_total{${sourceLabel},reason="unplanned"} 1`,
    ]) {
      expect(metrics).toContain(line);
    }
    // Bad queries get the documented errors.
    const badWindow = await violationsOf(t, planned.source, '2h');
    expect(badWindow.status).toBe(400);
    expect(badWindow.body).toMatchObject({
      code: 3,
      error: expect.stringContaining('window must be one of 1h, 24h, 7d'),
    });
    const unknown = await configApi(
      t,
      'GET',
      `workspaces/${planned.source.workspaceSlug}/sources/nope/violations`,
    );
    expect(unknown.status).toBe(404);
    const unauthenticated = await fetch(
      `${t.baseUrl}/v1beta/workspaces/${planned.source.workspaceSlug}/sources/${planned.source.sourceSlug}/violations`,
    );
    expect(unauthenticated.status).toBe(401);
    const openApi = (await (await fetch(`${t.baseUrl}/v1beta/openapi.json`)).json()) as { paths: object };
    expect(Object.keys(openApi.paths)).toContain(
      '/v1beta/workspaces/{workspace}/sources/{source}/violations',
    );
  });

  it('R15: destinations receive the stored, post-Protocols form', async () => {
    const planned = await plannedSource(t, subscriptionPlan, {
      allow_unplanned_track_event_properties: false,
    });
    const receiver = await WebhookReceiver.start({ secret: 'protocols-secret' });
    try {
      await createWebhookDestination(t, planned.source, 'webhooks', receiver, 'protocols-secret');
      const messageId = id();
      await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
        analytics.track({
          userId: 'u',
          event: 'Subscription Started',
          properties: { subscription_id: 's', secret_stuff: 1 },
          messageId,
        }),
      );
      const { value: delivered } = await pollUntil('the webhook receives the message', 20_000, async () =>
        receiver.acceptedOnce(messageId),
      );
      expect(delivered.signatureValid).toBe(true);
      expect(delivered.body.properties).toEqual({ subscription_id: 's' });
      expect(delivered.body.context.protocols).toEqual({
        sourceId: planned.source.sourceId,
        omitted: ['secret_stuff'],
      });
      // Exactly what the log holds.
      expect(delivered.body).toEqual((await storedPayloads(t, planned.source)).get(messageId));
    } finally {
      await receiver.close();
    }
  });

  it('R15: a replay sends what the log holds, without judging it again under a stricter config', async () => {
    const planned = await plannedSource(t, subscriptionPlan, {
      allow_unplanned_track_event_properties: false,
    });
    const startTime = new Date(Date.now() - 1_000).toISOString();
    const messageId = id();
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Subscription Started', properties: { plan: 'pro' }, messageId }),
    );
    // Now this message would be blocked (it lacks subscription_id).
    await setSchemaConfig(t, planned.source, { allow_track_event_on_violations: false });
    const receiver = await WebhookReceiver.start({ secret: 'replay-secret' });
    try {
      await createWebhookDestination(t, planned.source, 'webhooks', receiver, 'replay-secret', {
        enabled: false,
      });
      const replays = `workspaces/${planned.source.workspaceSlug}/sources/${planned.source.sourceSlug}/destinations/webhooks/replays`;
      const replay = await configApi(t, 'POST', replays, { start_time: startTime });
      expect(replay.status).toBe(200);
      const { value: delivered } = await pollUntil('the replay delivers the message', 20_000, async () =>
        receiver.acceptedOnce(messageId),
      );
      const stored = (await storedPayloads(t, planned.source)).get(messageId)!;
      expect(delivered.body.properties).toEqual({});
      expect(delivered.body.context).toEqual(stored.context);
      expect(stored.context.protocols).toEqual({
        sourceId: planned.source.sourceId,
        omitted: ['plan'],
        violations: [requiredSubscriptionId],
      });
    } finally {
      await receiver.close();
    }
  });

  it('R16: a Segment UI export (draft-04) and a typewriter plan enforce; a schema that does not compile is skipped', async () => {
    const ui = await plannedSource(t, SEGMENT_UI_PLAN_RULES, { allow_track_event_on_violations: false });
    const [good, bad] = [id(), id()];
    await sendWithAnalyticsNode(t, ui.source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Order Completed',
        properties: { order_id: 'ord_1', revenue: 5, currency: null },
        messageId: good,
      });
      analytics.track({
        userId: 'u',
        event: 'Order Completed',
        properties: { order_id: 'ord_2', revenue: 5, completed_at: 'soon' },
        messageId: bad,
      });
    });
    const uiStored = await storedPayloads(t, ui.source);
    expect([...uiStored.keys()]).toEqual([good]);
    expect(uiStored.get(good)!.context.protocols).toBeUndefined();

    const typewriterPlan = JSON.parse(
      readFileSync(
        join(__dirname, '../../../../node_modules/typewriter/example/analytics/plan.json'),
        'utf8',
      ),
    );
    const typewriter = await plannedSource(t, typewriterPlan.rules, {
      allow_unplanned_track_event_properties: false,
    });
    const [signIn, failed] = [id(), id()];
    await sendWithAnalyticsNode(t, typewriter.source.writeKey, (analytics) => {
      analytics.track({
        userId: 'u',
        event: 'Sign In Submitted',
        properties: { id: 'u1', numAttempts: 1, extra: 1 },
        messageId: signIn,
      });
      analytics.track({
        userId: 'u',
        event: 'Sign In Failed',
        properties: { numAttempts: 'two' },
        messageId: failed,
      });
    });
    const typewriterStored = await storedPayloads(t, typewriter.source);
    expect(typewriterStored.get(signIn)!.properties).toEqual({ id: 'u1', numAttempts: 1 });
    expect(
      typewriterStored
        .get(failed)!
        .context.protocols.violations.map((v: any) => v.type)
        .sort(),
    ).toEqual(['Invalid Type', 'Required']);

    const broken = await plannedSource(t, {
      events: [
        // Not a JSON Schema type: the schema does not compile (a pattern RE2 refuses is a 400 on write).
        eventRule('Broken', { code: { type: 'text' } }),
        eventRule('Fine', {}, ['needed']),
      ],
    });
    const [brokenId, fineId] = [id(), id()];
    const statuses = await sendWithAnalyticsNode(t, broken.source.writeKey, (analytics) => {
      analytics.track({ userId: 'u', event: 'Broken', properties: { code: 1 }, messageId: brokenId });
      analytics.track({ userId: 'u', event: 'Fine', properties: {}, messageId: fineId });
    });
    expect(statuses).toEqual([200]);
    const brokenStored = await storedPayloads(t, broken.source);
    expect(brokenStored.get(brokenId)!.context.protocols).toBeUndefined();
    expect(brokenStored.get(fineId)!.context.protocols.violations).toHaveLength(1);
  });

  it('R17: schema-config and connection changes apply to the next message; disconnecting stops enforcement', async () => {
    const planned = await plannedSource(t, subscriptionPlan, {});
    const first = id();
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: first }),
    );
    await setSchemaConfig(t, planned.source, { allow_unplanned_track_events: false });
    const second = id();
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: second }),
    );
    await disconnectPlan(t, planned.source, planned.planId);
    const third = id();
    await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) =>
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: third }),
    );
    // Nothing is retroactive: the first stays stored.
    expect([...(await storedPayloads(t, planned.source)).keys()].sort()).toEqual([first, third].sort());
  });

  it('R18: forwarding targets must be other existing sources; a target deleted later drops forwards only', async () => {
    const planned = await plannedSource(t, subscriptionPlan, {});
    for (const target of ['no-such-source', planned.source.sourceSlug]) {
      for (const field of ['forwarding_blocked_events_to', 'forwarding_violations_to']) {
        const response = await patchSchemaConfig(t, planned.source, { [field]: target });
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ code: 3, error: expect.stringContaining(field) });
      }
    }
    expect((await patchSchemaConfig(t, planned.source, { forwarding_violations_to: '' })).status).toBe(200);
    await setSchemaConfig(t, planned.source, {
      allow_unplanned_track_events: false,
      forwarding_blocked_events_to: planned.blockedTarget.sourceSlug,
    });
    await deleteSource(t, planned.blockedTarget);
    const [blocked, allowed] = [id(), id()];
    const statuses = await sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) => {
      analytics.track({ userId: 'u', event: 'Unplanned', messageId: blocked });
      analytics.track({
        userId: 'u',
        event: 'Subscription Started',
        properties: { subscription_id: 's' },
        messageId: allowed,
      });
    });
    expect(statuses).toEqual([200]);
    expect([...(await storedPayloads(t, planned.source)).keys()]).toEqual([allowed]);
  });

  it('R19: integrations, Protocols key included, do not switch enforcement off', async () => {
    const { source } = await plannedSource(t, subscriptionPlan, { allow_unplanned_track_events: false });
    const messageId = id();
    await sendWithAnalyticsNode(t, source.writeKey, (analytics) =>
      analytics.track({
        userId: 'u',
        event: 'Unplanned',
        integrations: { Protocols: false, All: true },
        messageId,
      }),
    );
    expect((await storedPayloads(t, source)).size).toBe(0);
  });

  it('R20: plan writes return an integer version per event and refuse a repeated name and version', async () => {
    const workspace = await createWorkspace(t);
    const created = await createPlan(t, workspace.slug, {
      events: [
        { name: 'A', rules: {} },
        { name: 'B', version: 3, rules: {} },
      ],
    });
    expect(created.body.rules.events.map((event: any) => event.version)).toEqual([1, 3]);
    const duplicate = await configApi(t, 'POST', `workspaces/${workspace.slug}/tracking-plans`, {
      tracking_plan: {
        display_name: 'Dup',
        rules: {
          events: [
            { name: 'A', version: 2 },
            { name: 'A', version: 2 },
          ],
        },
      },
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({ code: 3, error: expect.stringContaining('"A" version 2') });
    const update = await configApi(
      t,
      'PATCH',
      `workspaces/${workspace.slug}/tracking-plans/${created.planId}`,
      {
        tracking_plan: { rules: { events: [{ name: 'A' }, { name: 'A', version: 1 }] } },
        update_mask: { paths: ['tracking_plan.rules'] },
      },
    );
    expect(update.status).toBe(400);
    expect(update.body.code).toBe(3);
    const unchanged = await configApi(
      t,
      'GET',
      `workspaces/${workspace.slug}/tracking-plans/${created.planId}`,
    );
    expect(unchanged.body.rules.events).toHaveLength(2);
  });
});
