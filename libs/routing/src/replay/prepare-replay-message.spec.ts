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

  it('never mutates the stored message and shares no objects with it', () => {
    const stored = deepFrozen(trackMessage({ integrations: { Mixpanel: false } }));
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    expect(stored.integrations).toEqual({ Mixpanel: false });
    expect(replayed.context).not.toBe(stored.context);
    (replayed.context as Record<string, unknown>).ip = 'changed';
    expect(stored.context.ip).toBe('203.0.113.7');
  });

  it('copies what JSON holds exactly, an own `__proto__` key included, and other objects as structuredClone does', () => {
    const stored = JSON.parse(
      '{"type":"track","event":"E","messageId":"m","integrations":{},"properties":' +
        '{"__proto__":{"polluted":true},"list":[1,{"deep":[null,"x"]}],"flag":false}}',
    ) as NormalizedMessage;
    const replayed = prepareReplayMessage(stored, 'Mixpanel');
    const { integrations: _replayed, ...rest } = replayed;
    const { integrations: _stored, ...storedRest } = stored;
    expect(rest).toEqual(storedRest);
    expect(Object.getPrototypeOf(replayed.properties)).toBe(Object.prototype);
    expect(Object.keys(replayed.properties ?? {})).toEqual(['__proto__', 'list', 'flag']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const at = new Date('2026-01-01T00:00:00Z');
    const withDate = prepareReplayMessage(
      { ...stored, context: { at } } as unknown as NormalizedMessage,
      'X',
    );
    expect((withDate.context as unknown as { at: Date }).at).toEqual(at);
    expect((withDate.context as unknown as { at: Date }).at).not.toBe(at);
  });

  it('copies any JSON message exactly as structuredClone does, sharing nothing with it', () => {
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
        const replayed = prepareReplayMessage(stored, 'Mixpanel');
        const expected = structuredClone(stored);
        expected.integrations = { All: false, Mixpanel: true };
        expect(replayed).toStrictEqual(expected);
        if (typeof stored.context === 'object' && stored.context !== null)
          expect(replayed.context).not.toBe(stored.context);
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
