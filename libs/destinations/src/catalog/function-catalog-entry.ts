/**
 * A tenant function seen as a catalog entry, so that its instances are configured, validated, masked
 * and presented exactly like instances of the built-in catalog (docs/functions.md §1, §2).
 * Function entries are never listed in the catalog: each belongs to one workspace, and the Config API
 * resolves a function id only among the URL's workspace's functions.
 */
import type { CatalogDestinationDefinition, DestinationSettingDefinition } from './catalog-entry.types';
import { defineSetting } from './destination-setting.builder';

/** What a function declares about one setting; the function aggregate's declaration, structurally. */
export interface FunctionSettingInput {
  readonly name: string;
  readonly label: string;
  readonly type: 'string' | 'boolean' | 'array' | 'text-map';
  readonly description: string;
  readonly required: boolean;
  readonly sensitive: boolean;
}

export interface FunctionInput {
  readonly functionId: string;
  readonly displayName: string;
  readonly description: string;
  readonly logoUrl: string;
  /** The declarations of the version its instances run. */
  readonly settings: readonly FunctionSettingInput[];
}

/** Function ids: `sfn_`, `dfn_` or `ifnd_` and a KSUID; no catalog slug starts so. */
const FUNCTION_ID = /^(?:sfn|dfn|ifnd)_[A-Za-z0-9]+$/;

/** Whether a catalog slug is a function's id rather than an entry of the built-in catalog. */
export function isFunctionId(slug: string): boolean {
  return FUNCTION_ID.test(slug);
}

export function functionCatalogEntry(fn: FunctionInput): CatalogDestinationDefinition {
  return {
    slug: fn.functionId,
    displayName: fn.displayName,
    description: fn.description,
    website: '',
    status: 'PRIVATE',
    logos: { logo: fn.logoUrl, mark: '' },
    components: ['CLOUD'],
    categories: { primary: 'Functions', secondary: '', additional: [] },
    settings: fn.settings.map(functionSettingDefinition),
    capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
  };
}

/** docs/functions.md §2: a sensitive string is a `password`, an array a `list`, a text map a `map`. */
function functionSettingDefinition(setting: FunctionSettingInput): DestinationSettingDefinition {
  const options = { required: setting.required, description: setting.description };
  switch (setting.type) {
    case 'string':
      return defineSetting(setting.name, setting.label, setting.sensitive ? 'password' : 'string', options);
    case 'boolean':
      return defineSetting(setting.name, setting.label, 'boolean', options);
    case 'array':
      return defineSetting(setting.name, setting.label, 'list', options);
    case 'text-map':
      return defineSetting(setting.name, setting.label, 'map', options);
  }
}

/** What the catalog's type check leaves to a function entry: an array setting holds strings only. */
export function problemWithFunctionSetting(key: string, value: unknown): string | null {
  if (Array.isArray(value) && value.some((item) => typeof item !== 'string')) {
    return `setting "${key}" expects a list of strings`;
  }
  return null;
}
