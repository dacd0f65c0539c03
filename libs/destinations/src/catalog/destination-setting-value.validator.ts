/**
 * Checks one destination config value against its catalog setting, so a Config API write with a
 * value of the wrong JSON type is refused with a 400 instead of reaching a delivery adapter.
 */
import type { DestinationSettingDefinition } from './catalog-entry.types';

export type ValidatedSetting = Pick<
  DestinationSettingDefinition,
  'key' | 'type' | 'pattern' | 'selectOptions' | 'refusedValueReason'
>;

/**
 * The reason `value` is not acceptable for `setting`, or `null` when it is.
 *
 * An empty string is accepted for string-like settings even when a pattern is set: it is the zero
 * value an update mask writes (docs/config-api.md §1.6) and means "not set". Whether a required setting is set is a
 * separate question, asked when a destination is enabled (`missingRequiredSettings`).
 */
export function validateDestinationSettingValue(setting: ValidatedSetting, value: unknown): string | null {
  const expected = (what: string) =>
    `setting "${setting.key}" expects ${what}, got ${describeJsonType(value)}`;
  switch (setting.type) {
    case 'string':
    case 'password':
    case 'color':
      if (typeof value !== 'string') return expected('a string');
      return checkPattern(setting, value);
    case 'select':
      if (typeof value !== 'string') return expected('a string');
      if (setting.selectOptions && !setting.selectOptions.includes(value)) {
        return `setting "${setting.key}" must be one of ${setting.selectOptions.map((option) => JSON.stringify(option)).join(', ')}, got ${JSON.stringify(value)}`;
      }
      return null;
    case 'number':
      // JSON cannot carry NaN or Infinity; refusing them keeps stored values re-serializable.
      if (typeof value !== 'number' || !Number.isFinite(value)) return expected('a number');
      return null;
    case 'boolean':
      if (typeof value !== 'boolean') return expected('a boolean');
      return null;
    case 'list':
      if (!Array.isArray(value)) return expected('a list');
      return null;
    case 'map': {
      if (!isPlainObject(value)) return expected('a map of strings');
      const badKey = Object.keys(value).find((key) => typeof value[key] !== 'string');
      if (badKey !== undefined) {
        return `setting "${setting.key}" expects a map of strings, but key ${JSON.stringify(badKey)} holds ${describeJsonType(value[badKey])}`;
      }
      return null;
    }
    case 'mixed':
      // Any JSON value; `undefined` is not one (it is what a missing `value` field parses to).
      if (value === undefined) return expected('a JSON value');
      return null;
  }
}

function checkPattern(setting: ValidatedSetting, value: string): string | null {
  if (value === '') return null;
  // The value itself is left out of the message: it may be a password.
  if (setting.pattern !== undefined && !new RegExp(setting.pattern).test(value))
    return `setting "${setting.key}" does not match the pattern ${setting.pattern}`;
  const refused = setting.refusedValueReason?.(value) ?? null;
  return refused === null ? null : `setting "${setting.key}": ${refused}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON name of a value's type, for error messages. */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isFinite(value) ? 'a number' : 'a non-finite number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}
