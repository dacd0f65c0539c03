export * from './destination-definition';
export { DESTINATION_DEFINITIONS, findDestinationDefinition } from './definitions';
export * from './catalog';
export * from './delivery';
export * from './webhooks';
export * from './postgres';
export * from './segment-actions';
