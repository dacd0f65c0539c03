import { Injectable } from '@nestjs/common';
import { SecretBox } from '@tributary/auth';
import { DestinationRecord, SettingDefinition } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import {
  CatalogDestinationDefinition,
  emptyValueOf,
  validateDestinationSettingValue,
} from '@tributary/destinations';
import { ConfigApiError } from '../shared/config-api.error';

export interface ConfigEntryInput {
  name: string;
  value?: unknown;
  type?: string | null;
}

/**
 * Turns the config entries of a request into setting values the decider can store: names
 * resolved (full `…/config/<key>` or a bare key), types taken from the catalog when the entry has
 * none, values checked against the catalog, and `password` values encrypted so that no secret
 * enters an event. A password sent back as the mask keeps its stored value: clients that read a
 * destination and write it back unchanged must not overwrite the secret with the mask.
 */
@Injectable()
export class DestinationConfigMapper {
  constructor(private readonly secretBox: SecretBox) {}

  toSettingValues(
    entries: readonly ConfigEntryInput[],
    catalogEntry: CatalogDestinationDefinition,
    current?: DestinationRecord,
  ): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (const entry of entries) {
      const key = settingKeyOf(entry.name);
      const setting = catalogEntry.settings.find((candidate) => candidate.key === key);
      if (!setting) {
        throw ConfigApiError.invalidArgument(
          `destination.config: "${key}" is not a setting of ${catalogEntry.slug}; settings: ${catalogEntry.settings
            .map((candidate) => candidate.key)
            .join(', ')}`,
        );
      }
      if (entry.type && entry.type !== setting.type) {
        throw ConfigApiError.invalidArgument(
          `destination.config.${key}: type "${entry.type}" does not match the catalog type "${setting.type}"`,
        );
      }
      const value =
        entry.value === undefined || entry.value === null
          ? emptyValueOf(setting.type, setting.selectOptions)
          : entry.value;
      if (
        setting.type === 'password' &&
        value === MASKED_SECRET &&
        current &&
        current.config[key] !== undefined
      ) {
        continue;
      }
      const problem = validateDestinationSettingValue(setting, value);
      if (problem) throw ConfigApiError.invalidArgument(`destination.config.${key}: ${problem}`);
      values[key] =
        setting.type === 'password' && value !== '' ? this.secretBox.encrypt(String(value)) : value;
    }
    return values;
  }
}

export function settingDefinitionsOf(catalogEntry: CatalogDestinationDefinition): SettingDefinition[] {
  return catalogEntry.settings.map((setting) => ({
    name: setting.key,
    required: setting.required,
    defaultValue: setting.defaultValue,
  }));
}

function settingKeyOf(entryName: string): string {
  const marker = entryName.lastIndexOf('/config/');
  return marker >= 0 ? entryName.slice(marker + '/config/'.length) : entryName;
}
