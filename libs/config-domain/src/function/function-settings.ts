import { invalidArgument } from '../shared/decider';
import type { FunctionSettingDeclaration, FunctionSettingType } from './function.events';

/** Most settings one function may declare (docs/functions.md §2). */
export const MAX_FUNCTION_SETTINGS = 50;

const SETTING_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const MAX_LABEL_LENGTH = 200;
const MAX_DESCRIPTION_LENGTH = 2_000;

/** The Config API's spellings and the Public API's upper-case ones, both accepted on input. */
const SETTING_TYPES: Readonly<Record<string, FunctionSettingType>> = {
  string: 'string',
  boolean: 'boolean',
  array: 'array',
  'text-map': 'text-map',
  STRING: 'string',
  BOOLEAN: 'boolean',
  ARRAY: 'array',
  TEXT_MAP: 'text-map',
};

/**
 * A function's setting declarations checked and normalized (docs/functions.md §2): at most 50, each
 * with a name of a letter then up to 63 letters, digits or `_`, unique; a type among `string`,
 * `boolean`, `array`, `text-map` (or `STRING`, `BOOLEAN`, `ARRAY`, `TEXT_MAP`); `label` defaulting
 * to the name; `required` and `sensitive` booleans defaulting to false, `sensitive` only on a string
 * (only a string can be stored encrypted and masked). `null` or absent means none. Refusals are
 * `invalid_argument` naming the entry, as `settings[2].type`.
 */
export function checkFunctionSettings(raw: unknown): FunctionSettingDeclaration[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidArgument('settings must be a list of setting declarations');
  if (raw.length > MAX_FUNCTION_SETTINGS) {
    throw invalidArgument(
      `settings: ${raw.length} declared; a function may declare at most ${MAX_FUNCTION_SETTINGS}`,
    );
  }
  const names = new Set<string>();
  return raw.map((entry, index) => {
    const at = `settings[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw invalidArgument(`${at} must be an object`);
    }
    const declaration = entry as Record<string, unknown>;
    const name = declaration.name;
    if (typeof name !== 'string' || !SETTING_NAME.test(name)) {
      throw invalidArgument(
        `${at}.name: ${JSON.stringify(name ?? null)} is not a setting name (a letter, then up to 63 letters, digits or "_")`,
      );
    }
    if (names.has(name)) throw invalidArgument(`${at}.name: "${name}" is declared twice`);
    names.add(name);
    const typeName = declaration.type;
    const type =
      typeof typeName === 'string' && Object.hasOwn(SETTING_TYPES, typeName)
        ? SETTING_TYPES[typeName]
        : undefined;
    if (!type) {
      throw invalidArgument(
        `${at}.type: ${JSON.stringify(typeName ?? null)} is not a setting type; expected string, boolean, array or text-map`,
      );
    }
    const label = optionalText(declaration.label, `${at}.label`, MAX_LABEL_LENGTH) || name;
    const description = optionalText(declaration.description, `${at}.description`, MAX_DESCRIPTION_LENGTH);
    const required = optionalBoolean(declaration.required, `${at}.required`);
    const sensitive = optionalBoolean(declaration.sensitive, `${at}.sensitive`);
    if (sensitive && type !== 'string') {
      throw invalidArgument(`${at}.sensitive: only a string setting can be sensitive, "${name}" is ${type}`);
    }
    return { name, label, type, description, required, sensitive };
  });
}

function optionalText(value: unknown, field: string, maxLength: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalidArgument(`${field} must be a string`);
  if (value.length > maxLength) throw invalidArgument(`${field} is longer than ${maxLength} characters`);
  return value;
}

function optionalBoolean(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalidArgument(`${field} must be true or false`);
  return value;
}
