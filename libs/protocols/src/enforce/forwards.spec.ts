import { normalized } from '../testing/protocols.fixtures';
import { blockedForward, violationForwards, violationMessageId, type ForwardingOrigin } from './forwards';

const origin: ForwardingOrigin = {
  source: { id: 'src_A', slug: 'web', name: 'Web site' },
  plan: { id: 'rs_1', name: 'Main plan' },
  now: '2026-02-03T04:05:06.789Z',
};
const violation = { type: 'Required', field: 'properties.a', description: 'properties.a is required' };

describe('blockedForward (R11)', () => {
  it('is the original message, same messageId, marked with its source, violations and reason', () => {
    const original = normalized({
      event: 'Signed Up',
      properties: { a: 1, unplanned: 2 },
      context: { ip: '1.1.1.1', protocols: { event_version: 2, omitted: ['forged'] } },
    });
    const forwarded = blockedForward(original, 'src_A', 'schema_violation', [violation]);
    expect(forwarded).toEqual({
      ...original,
      forwardedFromProject: 'src_A',
      context: {
        ip: '1.1.1.1',
        protocols: {
          sourceId: 'src_A',
          violations: [violation],
          blocked_reason: 'schema_violation',
        },
      },
    });
    expect(forwarded.messageId).toBe(original.messageId);
    expect((original.context as any).protocols).toEqual({ event_version: 2, omitted: ['forged'] });
  });
});

describe('violationForwards (R12)', () => {
  it('makes one Violation Generated track per message, listing its violations, with the exact payload', () => {
    const message = normalized({
      messageId: 'client-id-1',
      event: 'Order Completed',
      sentAt: '2026-02-03T04:00:00.000Z',
      originalTimestamp: '2026-02-03T03:59:59.000Z',
      context: {
        app: { name: 'Shop', version: '4.2' },
        library: { name: 'analytics-node', version: '3.1.0' },
      },
    });
    const second = {
      type: 'Invalid Type',
      field: 'userId',
      description: 'Invalid type. Expected: integer, given: string',
    };
    const forwards = violationForwards(message, [violation, second], origin);
    expect(forwards).toHaveLength(1);
    expect(forwards[0]).toEqual({
      type: 'track',
      event: 'Violation Generated',
      userId: 'schema-violations',
      messageId: violationMessageId('src_A', 'client-id-1', 0),
      integrations: {},
      context: {
        app: { name: 'Shop', version: '4.2' },
        library: { name: 'analytics-node', version: '3.1.0' },
      },
      forwardedFromProject: 'src_A',
      timestamp: origin.now,
      receivedAt: origin.now,
      properties: {
        appVersion: '4.2',
        eventMessageID: 'client-id-1',
        eventName: 'Order Completed',
        eventSentAt: '2026-02-03T04:00:00.000Z',
        eventTimestamp: '2026-02-03T03:59:59.000Z',
        eventType: 'track',
        sourceID: 'src_A',
        sourceName: 'Web site',
        sourceSlug: 'web',
        trackingPlanID: 'rs_1',
        trackingPlanName: 'Main plan',
        violationType: 'Required',
        violationField: 'properties.a',
        violationDescription: 'properties.a is required',
        violations: [violation, second],
        violationCount: 2,
      },
    });
    expect(violationForwards(message, [], origin)).toEqual([]);
  });

  it('counts the violations a truncated list leaves out', () => {
    const [forward] = violationForwards(normalized({}), [violation], origin, 4_900);
    expect(forward.properties).toMatchObject({ violations: [violation], violationCount: 4_901 });
  });

  it('uses null app, empty strings and the zero time for what the message does not have', () => {
    const page = normalized({ type: 'page', context: {} });
    const [forward] = violationForwards(page, [violation], origin);
    expect(forward.context).toEqual({ app: null, library: undefined });
    expect(forward.properties).toMatchObject({
      appVersion: '',
      eventName: '',
      eventSentAt: '0001-01-01T00:00:00Z',
      eventTimestamp: '0001-01-01T00:00:00Z',
      eventType: 'page',
    });
    const named = violationForwards(normalized({ type: 'screen', name: 'Home' }), [violation], origin)[0];
    expect((named.properties as any).eventName).toBe('Home');
    const identify = violationForwards(
      normalized({ type: 'identify', event: 'ignored' }),
      [violation],
      origin,
    )[0];
    expect((identify.properties as any).eventName).toBe('');
  });
});

describe('violationMessageId', () => {
  it('is sch- and 27 base62 characters, the same for the same inputs and different otherwise', () => {
    const id = violationMessageId('src_A', 'm1', 0);
    expect(id).toMatch(/^sch-[0-9A-Za-z]{27}$/);
    expect(violationMessageId('src_A', 'm1', 0)).toBe(id);
    const others = [
      violationMessageId('src_A', 'm1', 1),
      violationMessageId('src_A', 'm2', 0),
      violationMessageId('src_B', 'm1', 0),
    ];
    expect(new Set([id, ...others]).size).toBe(4);
  });
});
