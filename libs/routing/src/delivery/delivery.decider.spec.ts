import type { FilterRecord } from '@tributary/config-domain';
import type { NormalizedMessage } from '@tributary/contracts';
import type { DestinationCapabilities } from '@tributary/destinations';
import type { RoutableFilter } from '../filters/destination-filters.decider';
import { prepareReplayMessage } from '../replay/prepare-replay-message';
import { deepFrozen, NOW, trackMessage } from '../routing-messages.fixture';
import { decideDelivery, type RoutableDestination } from './delivery.decider';

const HOUR_MS = 60 * 60 * 1000;

function destination(overrides: Partial<RoutableDestination> = {}): RoutableDestination {
  return {
    slug: 'mixpanel-prod',
    displayName: 'Mixpanel',
    enabled: true,
    filters: [],
    capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
    ...overrides,
  };
}

function dropAll(overrides: Partial<RoutableFilter> = {}): RoutableFilter {
  return {
    filterId: 'df_all',
    title: 'Drop all',
    if: 'all',
    enabled: true,
    actions: [{ type: 'drop_event' }],
    ...overrides,
  };
}

/** A message `ageMs` old at NOW. */
function messageAged(ageMs: number, overrides: Record<string, unknown> = {}): NormalizedMessage {
  return trackMessage({ timestamp: new Date(NOW.getTime() - ageMs).toISOString(), ...overrides });
}

describe('decideDelivery', () => {
  it('delivers the very same message when nothing stops it', () => {
    const message = trackMessage();
    expect(decideDelivery(message, destination(), { now: NOW })).toEqual({ outcome: 'deliver', message });
    expect((decideDelivery(message, destination(), { now: NOW }) as { message: unknown }).message).toBe(
      message,
    );
  });

  describe('enabled', () => {
    it('skips a disabled destination', () => {
      expect(decideDelivery(trackMessage(), destination({ enabled: false }), { now: NOW })).toEqual({
        outcome: 'skip',
        reason: 'disabled',
        detail: 'destination mixpanel-prod is disabled',
      });
      expect(
        decideDelivery(trackMessage(), destination({ enabled: false }), { now: NOW, replay: false }).outcome,
      ).toBe('skip');
    });

    it('lets a replay reach a disabled destination', () => {
      const replayed = prepareReplayMessage(trackMessage({ integrations: { Mixpanel: false } }), 'Mixpanel');
      expect(decideDelivery(replayed, destination({ enabled: false }), { now: NOW, replay: true })).toEqual({
        outcome: 'deliver',
        message: replayed,
      });
    });

    it('is checked before the integrations object', () => {
      const message = trackMessage({ integrations: { Mixpanel: false } });
      expect(decideDelivery(message, destination({ enabled: false }), { now: NOW })).toMatchObject({
        reason: 'disabled',
      });
    });
  });

  describe('integrations', () => {
    it.each([
      [{ All: false, Mixpanel: true }, 'deliver'],
      [{ All: false, Amplitude: true }, 'skip'],
      [{ all: false }, 'skip'],
      [{ all: false, Mixpanel: { apiKey: 'override' } }, 'deliver'],
      [{ Mixpanel: false }, 'skip'],
      [{ mixpanel: false }, 'deliver'],
      [{ All: false, mixpanel: true }, 'skip'],
      [{}, 'deliver'],
    ])('%j → %s', (integrations, outcome) => {
      const decision = decideDelivery(trackMessage({ integrations }), destination(), { now: NOW });
      expect(decision.outcome).toBe(outcome);
      if (decision.outcome === 'skip') expect(decision.reason).toBe('integrations');
    });

    it('still applies on a replay, which the replayer rewrote for one destination', () => {
      const replayed = prepareReplayMessage(trackMessage(), 'Amplitude');
      expect(decideDelivery(replayed, destination(), { now: NOW, replay: true })).toMatchObject({
        outcome: 'skip',
        reason: 'integrations',
        detail: 'integrations.All is false and "Mixpanel" is not set to true',
      });
    });
  });

  describe('historical timestamps', () => {
    const limited = destination({
      capabilities: { acceptsHistoricalTimestampsUpToMs: 4 * HOUR_MS, destinationFiltersApply: true },
    });

    it('delivers a message inside the accepted age, up to the limit itself', () => {
      expect(decideDelivery(messageAged(HOUR_MS), limited, { now: NOW }).outcome).toBe('deliver');
      expect(decideDelivery(messageAged(4 * HOUR_MS), limited, { now: NOW }).outcome).toBe('deliver');
    });

    it('skips a message older than the destination accepts', () => {
      expect(decideDelivery(messageAged(4 * HOUR_MS + 1), limited, { now: NOW })).toEqual({
        outcome: 'skip',
        reason: 'historical',
        detail: `timestamp 2026-03-10T07:59:59.999Z is ${4 * HOUR_MS + 1} ms old; Mixpanel accepts events up to ${4 * HOUR_MS} ms old`,
      });
      expect(decideDelivery(messageAged(365 * 24 * HOUR_MS), limited, { now: NOW }).outcome).toBe('skip');
    });

    it('accepts any age when the capability is null', () => {
      expect(decideDelivery(messageAged(10 * 365 * 24 * HOUR_MS), destination(), { now: NOW }).outcome).toBe(
        'deliver',
      );
    });

    it('delivers a message timestamped in the future', () => {
      expect(decideDelivery(messageAged(-HOUR_MS), limited, { now: NOW }).outcome).toBe('deliver');
    });

    it('uses the now it is given, not the clock', () => {
      const message = messageAged(HOUR_MS);
      expect(decideDelivery(message, limited, { now: new Date(NOW.getTime() + 3 * HOUR_MS) }).outcome).toBe(
        'deliver',
      );
      expect(
        decideDelivery(message, limited, { now: new Date(NOW.getTime() + 3 * HOUR_MS + 1) }).outcome,
      ).toBe('skip');
    });

    it('applies to replays too, since the vendor refuses old events all the same', () => {
      const replayed = prepareReplayMessage(messageAged(5 * HOUR_MS), 'Mixpanel');
      expect(decideDelivery(replayed, limited, { now: NOW, replay: true })).toMatchObject({
        reason: 'historical',
      });
    });

    it('is checked after integrations and before filters', () => {
      const old = messageAged(5 * HOUR_MS, { integrations: { Mixpanel: false } });
      expect(decideDelivery(old, limited, { now: NOW })).toMatchObject({ reason: 'integrations' });
      const withFilter = { ...limited, filters: [dropAll()] };
      expect(decideDelivery(messageAged(5 * HOUR_MS), withFilter, { now: NOW })).toMatchObject({
        reason: 'historical',
      });
    });

    it('refuses an invalid now', () => {
      expect(() => decideDelivery(trackMessage(), limited, { now: new Date('nonsense') })).toThrow(
        /invalid Date/,
      );
    });
  });

  describe('destination filters', () => {
    it('filters a message a filter drops, naming the filter', () => {
      expect(decideDelivery(trackMessage(), destination({ filters: [dropAll()] }), { now: NOW })).toEqual({
        outcome: 'filter',
        reason: 'dropped',
        filterId: 'df_all',
        filterTitle: 'Drop all',
      });
    });

    it('reports a sampled-out message', () => {
      const sampling: RoutableFilter = {
        ...dropAll(),
        filterId: 'df_s',
        actions: [{ type: 'sample_event', percent: 0, path: 'userId' }],
      };
      expect(
        decideDelivery(trackMessage(), destination({ filters: [sampling] }), { now: NOW }),
      ).toMatchObject({
        outcome: 'filter',
        reason: 'sampled_out',
        filterId: 'df_s',
      });
    });

    it('delivers the transformed copy when a filter removes fields', () => {
      const removeEmail: RoutableFilter = {
        ...dropAll(),
        actions: [{ type: 'blocklist_fields', fields: { properties: { fields: ['email'] } } }],
      };
      const input = deepFrozen(trackMessage());
      const decision = decideDelivery(input, destination({ filters: [removeEmail] }), { now: NOW });
      expect(decision.outcome).toBe('deliver');
      const delivered = (decision as { message: NormalizedMessage & { properties: Record<string, unknown> } })
        .message;
      expect(delivered.properties.email).toBeUndefined();
      expect(delivered.properties.total).toBe(99.5);
      expect((input as { properties: Record<string, unknown> }).properties.email).toBe('someone@example.com');
    });

    it('ignores disabled filters', () => {
      expect(
        decideDelivery(trackMessage(), destination({ filters: [dropAll({ enabled: false })] }), { now: NOW })
          .outcome,
      ).toBe('deliver');
    });

    it('does not run at all for a destination they do not apply to (warehouses, S3)', () => {
      const storage = destination({
        filters: [dropAll(), dropAll({ if: 'not valid FQL (' })],
        capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: false },
      });
      const message = trackMessage();
      expect(decideDelivery(message, storage, { now: NOW })).toEqual({ outcome: 'deliver', message });
    });

    it('still apply on a replay', () => {
      const replayed = prepareReplayMessage(trackMessage(), 'Mixpanel');
      expect(
        decideDelivery(replayed, destination({ enabled: false, filters: [dropAll()] }), {
          now: NOW,
          replay: true,
        }),
      ).toMatchObject({
        outcome: 'filter',
        reason: 'dropped',
      });
    });

    it('hold the message back when a stored filter is invalid', () => {
      const decision = decideDelivery(
        trackMessage(),
        destination({ filters: [dropAll({ if: "event = 'x" })] }),
        { now: NOW },
      );
      expect(decision).toMatchObject({ outcome: 'filter', reason: 'invalid_filter', filterId: 'df_all' });
    });
  });

  it('never mutates the message or the destination', () => {
    const message = deepFrozen(trackMessage({ integrations: { All: false, Mixpanel: true } }));
    const target = deepFrozen(
      destination({
        filters: [
          {
            filterId: 'a',
            title: 'a',
            if: 'all',
            enabled: true,
            actions: [{ type: 'whitelist_fields', fields: { properties: { fields: ['total'] } } }],
          },
          {
            filterId: 'b',
            title: 'b',
            if: "type = 'track'",
            enabled: true,
            actions: [{ type: 'blacklist_fields', fields: { context: { fields: ['ip'] } } }],
          },
        ],
      }),
    );
    const messageBefore = structuredClone(message);
    const targetBefore = structuredClone(target);
    const decision = decideDelivery(message, target, { now: NOW });
    expect(decision.outcome).toBe('deliver');
    expect(message).toEqual(messageBefore);
    expect(target).toEqual(targetBefore);
    const delivered = (decision as { message: NormalizedMessage & { properties: unknown } }).message;
    expect(delivered.properties).toEqual({ total: 99.5 });
    expect(delivered.context.ip).toBeUndefined();
  });

  it('takes config-domain filter records and catalog capabilities as they are', () => {
    // Compile-time check: the local input interfaces accept the stored shapes without mapping.
    const record: FilterRecord = {
      filterId: 'df_1',
      title: 'Drop identify',
      description: '',
      if: "type = 'identify'",
      enabled: true,
      actions: [{ type: 'drop_event' }],
      createTime: '2026-01-01T00:00:00Z',
      updateTime: '2026-01-01T00:00:00Z',
    };
    const capabilities: DestinationCapabilities = {
      acceptsHistoricalTimestampsUpToMs: null,
      destinationFiltersApply: true,
    };
    const target: RoutableDestination = {
      slug: 'mp',
      displayName: 'Mixpanel',
      enabled: true,
      filters: [record],
      capabilities,
    };
    expect(decideDelivery(trackMessage(), target, { now: NOW }).outcome).toBe('deliver');
  });
});
