/**
 * A short way to write a catalog setting: the type decides the empty default, options override it.
 */
import type { DestinationSettingType } from '@tributary/contracts';
import type { DestinationSettingDefinition, JsonValue } from './catalog-entry.types';

export interface DestinationSettingOptions {
  required?: boolean;
  deprecated?: boolean;
  defaultValue?: JsonValue;
  pattern?: string;
  refusedValueReason?: (value: string) => string | null;
  selectOptions?: readonly string[];
  description?: string;
}

/**
 * The value of a setting nobody has filled in. A `select` starts at its first option so the value is
 * always one the validator accepts; `mixed` has no natural empty value, so it is `null`.
 */
export function emptyValueOf(type: DestinationSettingType, selectOptions?: readonly string[]): JsonValue {
  switch (type) {
    case 'string':
    case 'password':
    case 'color':
      return '';
    case 'select':
      return selectOptions?.[0] ?? '';
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'list':
      return [];
    case 'map':
      return {};
    case 'mixed':
      return null;
  }
}

export function defineSetting(
  key: string,
  displayName: string,
  type: DestinationSettingType,
  options: DestinationSettingOptions = {},
): DestinationSettingDefinition {
  return {
    key,
    displayName,
    type,
    required: options.required ?? false,
    deprecated: options.deprecated ?? false,
    defaultValue: options.defaultValue ?? emptyValueOf(type, options.selectOptions),
    ...(options.pattern !== undefined && { pattern: options.pattern }),
    ...(options.refusedValueReason !== undefined && { refusedValueReason: options.refusedValueReason }),
    ...(options.selectOptions !== undefined && { selectOptions: options.selectOptions }),
    ...(options.description !== undefined && { description: options.description }),
  };
}
