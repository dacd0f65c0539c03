import { coveredMessageTypes, draftsOf, messageTypesOf, subscriptionsValue, toDraft } from './subscriptions';

describe('message types named by subscriptions', () => {
  it('reads the types an FQL names, in the usual order, whatever the spacing or quotes', () => {
    expect(messageTypesOf('type = "identify" or type="track"')).toEqual(['track', 'identify']);
    expect(messageTypesOf('type = \'page\' and event = "Viewed"')).toEqual(['page']);
    expect(messageTypesOf('event = "Order Completed"')).toEqual([]);
    expect(messageTypesOf('type = "unknown"')).toEqual([]);
  });

  it('unites the types of every preset', () => {
    expect(
      coveredMessageTypes([
        { subscribe: 'type = "track" and event != "x"' },
        { subscribe: 'type = "alias"' },
        { subscribe: 'type = "track" or type = "page"' },
      ]),
    ).toEqual(['track', 'page', 'alias']);
    expect(coveredMessageTypes([])).toEqual([]);
  });
});

describe('subscription drafts', () => {
  const preset = {
    name: 'Track Calls',
    subscribe: 'type = "track"',
    partnerAction: 'logEvent',
    mapping: { user_id: { '@path': '$.userId' } },
  };

  it('round-trips a stored subscription, writing `enabled` only when off', () => {
    expect(subscriptionsValue([toDraft(preset)])).toEqual([preset]);
    const disabled = { ...toDraft(preset), enabled: false, name: '  ' };
    expect(subscriptionsValue([disabled])).toEqual([
      { subscribe: preset.subscribe, partnerAction: 'logEvent', mapping: preset.mapping, enabled: false },
    ]);
    expect(draftsOf([{ ...preset, enabled: false }])[0].enabled).toBe(false);
  });

  it('reads anything but a list of objects as no subscriptions', () => {
    expect(draftsOf(undefined)).toEqual([]);
    expect(draftsOf('[]')).toEqual([]);
    expect(draftsOf([null, 3])).toEqual([]);
  });

  it('says which subscription has a mapping that is not a JSON object', () => {
    const broken = { ...toDraft(preset), mappingText: '{"user_id": ' };
    expect(() => subscriptionsValue([toDraft(preset), broken])).toThrow(
      /The mapping of subscription “Track Calls” is not valid JSON/,
    );
    const list = { ...toDraft(preset), name: '', mappingText: '[1]' };
    expect(() => subscriptionsValue([toDraft(preset), list])).toThrow(
      'The mapping of subscription number 2 must be a JSON object ({"field": value}).',
    );
    expect(subscriptionsValue([{ ...toDraft(preset), mappingText: ' ' }])[0]).toMatchObject({ mapping: {} });
  });
});
