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
