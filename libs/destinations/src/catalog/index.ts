export * from './catalog-entry.types';
export {
  listCatalogSources,
  listCatalogDestinations,
  findCatalogSource,
  findCatalogDestination,
  defaultConfigFor,
  missingRequiredSettings,
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
