import { previewSettingValue, prettyJson, sampleEvent, starterCode } from './function-samples';

describe("the function editor's samples and setting values", () => {
  it('gives destination and insert functions a track message, source functions a webhook body', () => {
    for (const kind of ['DESTINATION', 'INSERT_DESTINATION'] as const) {
      expect(JSON.parse(sampleEvent(kind))).toMatchObject({ type: 'track', event: 'Order Completed' });
    }
    const body = JSON.parse(sampleEvent('SOURCE'));
    expect(body.type).toBeUndefined();
    expect(body).toMatchObject({ event: 'Order Placed', userId: 'user-42' });
  });

  it('starts each kind with its entry point', () => {
    expect(starterCode('SOURCE')).toMatch(/async function onRequest\(request, settings\)/);
    expect(starterCode('DESTINATION')).toMatch(/async function onTrack\(event, settings\)/);
    expect(starterCode('INSERT_DESTINATION')).toMatch(/return event;/);
  });

  it('reads each setting type as the function gets it', () => {
    expect(previewSettingValue({ name: 'on', type: 'boolean' }, true)).toBe(true);
    expect(previewSettingValue({ name: 'on', type: 'boolean' }, undefined)).toBe(false);
    expect(previewSettingValue({ name: 'key', type: 'string' }, 'k-1')).toBe('k-1');
    expect(previewSettingValue({ name: 'key', type: 'string' }, undefined)).toBe('');
    expect(previewSettingValue({ name: 'list', type: 'array' }, ' a \n\nb\n')).toEqual(['a', 'b']);
    expect(previewSettingValue({ name: 'map', type: 'text-map' }, '{"a":"b"}')).toEqual({ a: 'b' });
    expect(previewSettingValue({ name: 'map', type: 'text-map' }, '  ')).toEqual({});
  });

  it('refuses a text map that is not a JSON object, naming the setting', () => {
    for (const typed of ['{nope', '[1]', '"text"', 'null']) {
      expect(() => previewSettingValue({ name: 'headers', type: 'text-map' }, typed)).toThrow(
        /^headers takes a JSON object/,
      );
    }
  });

  it('indents JSON output and leaves anything else as it came', () => {
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson('not json')).toBe('not json');
    expect(prettyJson(null)).toBe('');
  });
});
