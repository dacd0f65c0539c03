export * from './config-read-model';
export * from './audit-trail';
export * from './config-projection.runner';
export * from './config-projections.module';
export * from './config-projection.metrics';
