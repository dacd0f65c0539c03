import { invalidArgument } from './decider';

/**
 * What a decider needs to know of one setting an instance gives a value to: a catalog entry's setting
 * (the catalog itself lives in libs/destinations) or a setting a tenant function declares.
 */
export interface SettingDefinition {
  name: string;
  required: boolean;
  defaultValue: unknown;
}

/** Refuses values of settings the definition does not have; `field` names the config in the message. */
export function rejectUnknownSettings(
  config: Record<string, unknown>,
  settings: readonly SettingDefinition[],
  field: string,
): void {
  const known = new Set(settings.map((setting) => setting.name));
  const unknown = Object.keys(config).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw invalidArgument(
      `${field} has unknown settings: ${unknown.join(', ')}; known: ${[...known].join(', ') || 'none'}`,
    );
  }
}

/** The names of required settings that `config` leaves unset (absent, `null` or `""`). */
export function unsetRequiredSettings(
  config: Record<string, unknown>,
  settings: readonly SettingDefinition[],
): string[] {
  return settings
    .filter((setting) => setting.required)
    .filter(
      (setting) =>
        config[setting.name] === undefined || config[setting.name] === null || config[setting.name] === '',
    )
    .map((setting) => setting.name);
}

/** Every setting with its default value: what an instance holds before its own values are merged in. */
export function defaultSettingValues(settings: readonly SettingDefinition[]): Record<string, unknown> {
  return Object.fromEntries(settings.map((setting) => [setting.name, structuredClone(setting.defaultValue)]));
}
