import type { CatalogDestinationSetting } from '@tributary/contracts';

/** What the form holds per setting: text, or a checkbox's state. */
export type SettingValues = Record<string, string | boolean>;

/** The value a form field starts with, from the current value of the setting (masked secrets stay blank). */
export function initialValue(setting: CatalogDestinationSetting, current: unknown): string | boolean {
  if (setting.type === 'boolean') return current === true;
  if (setting.type === 'password') return '';
  if (current === undefined || current === null) return '';
  return typeof current === 'string' ? current : JSON.stringify(current);
}

/** Form text to the JSON value of the setting's type; throws a sentence for a value that does not fit. */
export function settingValue(setting: CatalogDestinationSetting, raw: string | boolean): unknown {
  if (setting.type === 'boolean') return raw === true;
  const text = String(raw);
  if (setting.type === 'number') {
    const number = Number(text);
    if (text.trim() === '' || Number.isNaN(number))
      throw new Error(`${setting.display_name} must be a number.`);
    return number;
  }
  if (setting.type === 'list' || setting.type === 'map' || setting.type === 'mixed') {
    if (text.trim() === '') return setting.type === 'list' ? [] : {};
    try {
      return JSON.parse(text);
    } catch {
      if (setting.type === 'list')
        return text
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean);
      throw new Error(`${setting.display_name} must be JSON.`);
    }
  }
  return text;
}
