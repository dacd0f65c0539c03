export * from './tracking-routes';
export * from './tracking-message.schema';
export * from './tracking-responses.schema';
