export * from './catalog';
export * from './delivery';
