export * from './config-read-model';
export * from './audit-trail';
export { ConfigProjectionRunner, type ConfigFoldFailure } from './config-projection.runner';
export * from './config-projections.module';
export * from './config-projection.metrics';
export type { ConfigChange } from './projections/config-projection';
export type { DestinationView } from './projections/destinations.projection';
export type { FunctionView } from './projections/functions.projection';
export type { SourceView } from './projections/sources.projection';
export type { TrackingPlanView } from './projections/tracking-plans.projection';
export {
  isSuppressedUser,
  type RegulationView,
  type WorkspaceSuppressions,
} from './projections/regulations.projection';
