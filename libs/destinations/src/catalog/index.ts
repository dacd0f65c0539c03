export * from './catalog-entry.types';
export {
  listCatalogSources,
  listCatalogDestinations,
  findCatalogSource,
  findCatalogDestination,
  defaultConfigFor,
  missingRequiredSettings,
  notInCatalogReason,
} from './catalog.lookups';
export {
  validateDestinationSettingValue,
  describeJsonType,
  type ValidatedSetting,
} from './destination-setting-value.validator';
export {
  toWireCatalogSource,
  toWireCatalogDestination,
  toWireCatalogDestinationSetting,
} from './catalog.wire';
export { defineSetting, emptyValueOf, type DestinationSettingOptions } from './destination-setting.builder';
export { RETIRED_CATALOG_DESTINATIONS } from './retired-destinations.data';
export {
  functionCatalogEntry,
  isFunctionId,
  problemWithFunctionSetting,
  type FunctionInput,
  type FunctionSettingInput,
} from './function-catalog-entry';
