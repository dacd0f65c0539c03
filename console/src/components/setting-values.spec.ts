import type { CatalogDestinationSetting } from '@tributary/contracts';
import { initialValue, settingValue } from './setting-values';

function setting(
  type: CatalogDestinationSetting['type'],
  displayName = 'Setting',
): CatalogDestinationSetting {
  return {
    name: 'key',
    display_name: displayName,
    type,
    deprecated: false,
    required: false,
    string_validators: { regexp: '' },
    map_validators: { regexp: '', min: 0, max: 0, map_prefix: '', select_options: [] },
    settings: [],
  };
}

describe('destination setting values in the console form', () => {
  it('starts a secret blank whatever is stored, so a masked value is never sent back', () => {
    expect(initialValue(setting('password'), '••••••')).toBe('');
    expect(initialValue(setting('boolean'), true)).toBe(true);
    expect(initialValue(setting('map'), { 'X-Team': 'a' })).toBe('{"X-Team":"a"}');
    expect(initialValue(setting('string'), undefined)).toBe('');
  });

  it('turns form text into the JSON value of the setting type', () => {
    expect(settingValue(setting('number'), '42.5')).toBe(42.5);
    expect(settingValue(setting('boolean'), true)).toBe(true);
    expect(settingValue(setting('map'), '{"X-Team":"a"}')).toEqual({ 'X-Team': 'a' });
    expect(settingValue(setting('map'), '  ')).toEqual({});
    expect(settingValue(setting('list'), 'a, b,,c')).toEqual(['a', 'b', 'c']);
    expect(settingValue(setting('list'), '["a"]')).toEqual(['a']);
    expect(settingValue(setting('string'), ' kept as typed ')).toBe(' kept as typed ');
  });

  it('says in words which setting does not fit its type', () => {
    expect(() => settingValue(setting('number', 'Batch size'), 'ten')).toThrow(
      'Batch size must be a number.',
    );
    expect(() => settingValue(setting('number', 'Batch size'), '')).toThrow('Batch size must be a number.');
    expect(() => settingValue(setting('map', 'Headers'), '{nope')).toThrow('Headers must be JSON.');
  });
});
