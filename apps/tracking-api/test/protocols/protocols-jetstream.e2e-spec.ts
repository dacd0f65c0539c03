// Protocols on JetStream (NATS_URL): outcomes are counted in stream PROTOCOLS, so another process
// connected to the same NATS (another tracking API or Config API replica) reads the same counts;
// forwards and resends behave as on the embedded log.
import { JetStreamEventLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomUUID } from 'node:crypto';
import { startTributary, type TributaryTestInstance } from '../../../../test/support/tributary-test-instance';
import {
  eventRule,
  plannedSource,
  sendWithAnalyticsNode,
  storedPayloads,
  violationsOf,
} from './protocols-e2e.kit';

const natsServerBinary = NatsServerProcess.findBinary();
// Conditional, never unconditional: without a nats-server binary the JetStream mode cannot be run here.
const describeWithNats = natsServerBinary ? describe : describe.skip;

describeWithNats('Protocols on JetStream', () => {
  let nats: NatsServerProcess;
  let t: TributaryTestInstance;

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    t = await startTributary({ environment: { NATS_URL: nats.url, CONFIG_API_RATE_LIMIT: '100000' } });
  }, 30_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await nats?.dispose();
  }, 30_000);

  it('counts once per messageId in the shared store, forwards once, and another replica reads the same outcomes', async () => {
    const planned = await plannedSource(
      t,
      { events: [eventRule('Paid', { amount: { type: 'number' } }, ['amount'])] },
      { allow_track_event_on_violations: false },
      { forward: true },
    );
    const [blocked, allowed] = [randomUUID(), randomUUID()];
    const send = () =>
      sendWithAnalyticsNode(t, planned.source.writeKey, (analytics) => {
        analytics.track({ userId: 'u', event: 'Paid', properties: {}, messageId: blocked });
        analytics.track({ userId: 'u', event: 'Other', properties: { x: 1 }, messageId: allowed });
      });
    expect(await send()).toEqual([200]);
    expect(await send()).toEqual([200]);

    expect([...(await storedPayloads(t, planned.source)).keys()]).toEqual([allowed]);
    expect([...(await storedPayloads(t, planned.blockedTarget)).keys()]).toEqual([blocked]);
    expect((await storedPayloads(t, planned.violationsTarget)).size).toBe(1);
    const summary = (await violationsOf(t, planned.source, '7d')).body;
    expect(summary).toMatchObject({
      total_violations: 1,
      total_blocked: 1,
      blocked: { schema_violation: 1 },
    });
    expect(summary.violations[0]).toMatchObject({
      field: 'properties.amount',
      violation_type: 'Required',
      count: 1,
    });

    // Another replica: its own connection to the same NATS sees what this one recorded.
    const replica = await JetStreamEventLog.connect({
      servers: nats.url,
      dedupeWindowMs: 24 * 3_600_000,
      retentionMs: 7 * 24 * 3_600_000,
    });
    try {
      const outcomes = await replica.readProtocolsOutcomes(
        planned.source.sourceId,
        new Date(Date.now() - 3_600_000),
      );
      expect(outcomes.map((outcome) => outcome.messageId)).toEqual([blocked]);
      expect(outcomes[0].outcome).toMatchObject({ blockedReason: 'schema_violation', eventName: 'Paid' });
      // A replica retrying the same message records nothing new.
      expect(
        await replica.recordProtocolsOutcomes([
          {
            workspaceId: planned.source.workspaceId,
            sourceId: planned.source.sourceId,
            messageId: blocked,
            outcome: {},
          },
        ]),
      ).toEqual([{ duplicate: true }]);
    } finally {
      await replica.close();
    }
  }, 60_000);
});
