import type { NormalizedMessage } from '@tributary/contracts';
import fc from 'fast-check';
import { decideDelivery } from '../delivery/delivery.decider';
import { deepFrozen, NOW, trackMessage } from '../routing-messages.fixture';
import { prepareReplayMessage } from './prepare-replay-message';

describe('prepareReplayMessage', () => {
  it('replaces integrations with {"All": false, "<Destination Name>": true}', () => {
    const stored = trackMessage({ integrations: { Mixpanel: false, Amplitude: true, all: true } });
    expect(prepareReplayMessage(stored, 'Mixpanel').integrations).toEqual({ All: false, Mixpanel: true });
  });

  it('keeps everything else, the consent object and the messageId included', () => {
    const stored = trackMessage({ integrations: { Mixpanel: false } });
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    const { integrations: _replaced, ...rest } = replayed;
    const { integrations: _original, ...storedRest } = stored;
    expect(rest).toEqual(storedRest);
    expect(replayed.context.consent).toEqual({
      categoryPreferences: { Advertising: false, Analytics: true },
    });
    expect(replayed.messageId).toBe('message-1');
  });

  it('never mutates the stored message, and copies only what it rewrites', () => {
    const stored = deepFrozen(trackMessage({ integrations: { Mixpanel: false } }));
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    expect(replayed).not.toBe(stored);
    expect(stored.integrations).toEqual({ Mixpanel: false });
    expect(replayed.integrations).not.toBe(stored.integrations);
    // What the replay does not rewrite is the stored value itself: no copy per message in flight.
    expect(replayed.context).toBe(stored.context);
    expect(replayed.properties).toBe(stored.properties);
    (replayed as { event?: string }).event = 'changed';
    expect(stored.event).toBe(trackMessage().event);
  });

  it('keeps what JSON holds exactly, an own `__proto__` key included, at the top level too', () => {
    const stored = JSON.parse(
      '{"type":"track","event":"E","messageId":"m","integrations":{},"__proto__":{"polluted":true},' +
        '"properties":{"__proto__":{"polluted":true},"list":[1,{"deep":[null,"x"]}],"flag":false}}',
    ) as NormalizedMessage;
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    const { integrations: _replayed, ...rest } = replayed;
    const { integrations: _stored, ...storedRest } = stored;
    expect(rest).toEqual(storedRest);
    expect(Object.getPrototypeOf(replayed)).toBe(Object.prototype);
    expect(Object.keys(replayed)).toEqual([
      'type',
      'event',
      'messageId',
      'integrations',
      '__proto__',
      'properties',
    ]);
    expect((replayed as unknown as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(replayed.properties ?? {})).toEqual(['__proto__', 'list', 'flag']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('gives any JSON message exactly as structuredClone would, with the integrations replaced', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (properties, context) => {
        const stored = JSON.parse(
          JSON.stringify({
            type: 'track',
            event: 'E',
            messageId: 'm',
            integrations: {},
            properties,
            context,
          }),
        ) as NormalizedMessage;
        const before = structuredClone(stored);
        const replayed = prepareReplayMessage(stored, 'Mixpanel');
        const expected = structuredClone(stored);
        expected.integrations = { All: false, Mixpanel: true };
        expect(replayed).toStrictEqual(expected);
        expect(stored).toStrictEqual(before);
      }),
    );
  });

  it('routes the replayed copy to that destination only, even one the original turned off', () => {
    const stored = trackMessage({ integrations: { Mixpanel: false } });
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    const destination = (displayName: string) => ({
      slug: displayName.toLowerCase(),
      displayName,
      enabled: true,
      filters: [],
      capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
    });
    expect(decideDelivery(replayed, destination('Mixpanel'), { now: NOW, replay: true }).outcome).toBe(
      'deliver',
    );
    expect(decideDelivery(replayed, destination('Amplitude'), { now: NOW, replay: true })).toMatchObject({
      outcome: 'skip',
      reason: 'integrations',
    });
  });
});
