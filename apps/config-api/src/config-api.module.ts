import { DynamicModule, Module } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import {
  Environment,
  ENVIRONMENT,
  MetricsRegistry,
  PUBLIC_API_PREFIX,
  RateLimiter,
  ServedSurface,
} from '@tributary/platform';
import type { FunctionLimits } from '@tributary/config-domain';
import { FunctionRunnerModule } from '@tributary/functions';
import { ZodValidationPipe } from 'nestjs-zod';
import { AccessTokenCommands } from './access-tokens/access-token.commands';
import { AccessTokensController } from './access-tokens/access-tokens.controller';
import { AuditEventsController } from './audit-events/audit-events.controller';
import { OAuthApplicationCommands } from './oauth-applications/oauth-application.commands';
import { OAuthApplicationsController } from './oauth-applications/oauth-applications.controller';
import { RegulationCommands } from './regulations/regulation.commands';
import { RegulationsController } from './regulations/regulations.controller';
import { ReplayCommands } from './replays/replay.commands';
import { ReplaysController } from './replays/replays.controller';
import { InstanceBootstrapService } from './bootstrap/instance-bootstrap.service';
import { ConsoleModule } from './console/console.module';
import { LiveEventsModule } from './live-events/live-events.module';
import { CatalogController } from './catalog/catalog.controller';
import { DestinationConfigMapper } from './destinations/destination-config';
import { DestinationCommands } from './destinations/destination.commands';
import { DestinationCatalog } from './destinations/destination-catalog';
import { InsertFunctionCommands } from './insert-functions/insert-function.commands';
import { InsertFunctionsController } from './insert-functions/insert-functions.controller';
import { PublicInsertFunctionInstancesController } from './public-api/public-insert-function-instances.controller';
import { DestinationsController } from './destinations/destinations.controller';
import { FilterPreviewController } from './filter-preview/filter-preview.controller';
import { FunctionPreviewController } from './functions/function-preview.controller';
import { FUNCTION_LIMITS, FunctionCommands } from './functions/function.commands';
import { FunctionsController } from './functions/functions.controller';
import { FilterCommands } from './filters/filter.commands';
import { FiltersController } from './filters/filters.controller';
import {
  CONFIG_PROJECTION_METRICS,
  ConfigProjectionRunner,
  registerConfigProjectionMetrics,
} from '@tributary/config-projections';
import {
  ConfigApiAccessModule,
  ConfigApiErrorFilter,
  serveConfigApiOpenApiDocument,
} from '@tributary/config-api-access';
import { SourceCommands } from './sources/source.commands';
import { SourcesController } from './sources/sources.controller';
import { SourceConnectionsHandler } from './tracking-plans/source-connections.handler';
import { TrackingPlanCommands } from './tracking-plans/tracking-plan.commands';
import { TrackingPlansController } from './tracking-plans/tracking-plans.controller';
import { UnimplementedController } from './unimplemented/unimplemented.controller';
import { FunctionLogsController } from './function-logs/function-logs.controller';
import { FunctionLogsEraser } from './function-logs/function-logs.eraser';
import { ViolationsController } from './violations/violations.controller';
import { WorkspaceCommands } from './workspaces/workspace.commands';
import { WorkspacesController } from './workspaces/workspaces.controller';
import { WORKSPACE_QUOTA_LIMITS, WorkspaceQuotaLimits, WorkspaceQuotas } from './shared/workspace-quotas';
import { PublicApiErrorFilter } from './public-api/public-api-error.filter';
import { PUBLIC_API_RATE_LIMITER, PublicApiGuard } from './public-api/public-api.guard';
import { PublicApiResources } from './public-api/public-api-resources';
import { PublicCatalogController, PublicWorkspaceController } from './public-api/public-workspace.controller';
import { PublicDestinationsController } from './public-api/public-destinations.controller';
import { PublicSourcesController } from './public-api/public-sources.controller';
import { PublicSubscriptionsController } from './public-api/public-subscriptions.controller';
import { PublicTrackingPlansController } from './public-api/public-tracking-plans.controller';
import { PublicUnservedController } from './public-api/public-unserved.controller';
import { PublicLabelsController } from './public-api/public-labels.controller';
import { PublicRegulationsController } from './public-api/public-regulations.controller';
import { PublicFunctionsController } from './public-api/public-functions.controller';
import { servePublicApiOpenApiDocument } from './public-api/public-api-openapi';

/**
 * The Config API: `/v1beta` and Segment's Public API subset (`/public-api`, docs/public-api.md) over
 * the config event store, one set of use cases under both; needs `ConfigProjectionsModule`,
 * `SecretBoxModule` and, for the live events, `EventLogModule`.
 */
@Module({})
export class ConfigApiModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: ConfigApiModule,
      // The guard, rate budget and lookup it shares with the router's Config API routes.
      imports: [
        ConfigApiAccessModule.register(environment),
        LiveEventsModule.register(environment),
        ConsoleModule,
      ],
      controllers: [
        WorkspacesController,
        AccessTokensController,
        CatalogController,
        SourcesController,
        DestinationsController,
        FiltersController,
        InsertFunctionsController,
        FilterPreviewController,
        // The preview's static path before the function routes' `:function`.
        FunctionPreviewController,
        FunctionsController,
        TrackingPlansController,
        ReplaysController,
        OAuthApplicationsController,
        RegulationsController,
        AuditEventsController,
        ViolationsController,
        FunctionLogsController,
        UnimplementedController,
        PublicWorkspaceController,
        PublicCatalogController,
        PublicSourcesController,
        PublicDestinationsController,
        PublicInsertFunctionInstancesController,
        PublicSubscriptionsController,
        PublicTrackingPlansController,
        PublicLabelsController,
        PublicRegulationsController,
        PublicFunctionsController,
        PublicUnservedController,
      ],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        { provide: APP_PIPE, useClass: ZodValidationPipe },
        {
          provide: WORKSPACE_QUOTA_LIMITS,
          useValue: {
            sources: environment.WORKSPACE_MAX_SOURCES,
            destinations: environment.WORKSPACE_MAX_DESTINATIONS,
            filtersPerDestination: environment.DESTINATION_MAX_FILTERS,
            trackingPlans: environment.WORKSPACE_MAX_TRACKING_PLANS,
            oauthApplications: environment.WORKSPACE_MAX_OAUTH_APPLICATIONS,
            runningReplays: environment.WORKSPACE_MAX_RUNNING_REPLAYS,
            configBytes: environment.WORKSPACE_MAX_CONFIG_BYTES,
            filterBytes: environment.FILTER_MAX_BYTES,
          } satisfies WorkspaceQuotaLimits,
        },
        WorkspaceQuotas,
        {
          provide: FUNCTION_LIMITS,
          useValue: {
            maxCodeBytes: environment.FUNCTION_MAX_CODE_BYTES,
            maxFunctions: environment.WORKSPACE_MAX_FUNCTIONS,
          } satisfies FunctionLimits,
        },
        FunctionCommands,
        TrackingPlanCommands,
        SourceCommands,
        DestinationCommands,
        FilterCommands,
        OAuthApplicationCommands,
        AccessTokenCommands,
        WorkspaceCommands,
        ReplayCommands,
        RegulationCommands,
        DestinationConfigMapper,
        DestinationCatalog,
        InsertFunctionCommands,
        InstanceBootstrapService,
        SourceConnectionsHandler,
        FunctionLogsEraser,
        // The Public API's budget is its own, apart from `/v1beta`'s.
        {
          provide: PUBLIC_API_RATE_LIMITER,
          useFactory: () => new RateLimiter(environment.PUBLIC_API_RATE_LIMIT),
        },
        PublicApiGuard,
        PublicApiErrorFilter,
        PublicApiResources,
      ],
    };
  }
}

/**
 * The Config API as a process serves it: `/v1beta` answering its errors in `{error, code}` and
 * `/public-api` in `{errors: [...]}`, the
 * read model's metrics, and the OpenAPI document of the `/v1beta` routes the process serves.
 */
export function configApiSurface(environment: Environment): ServedSurface {
  const errorFilter = new ConfigApiErrorFilter();
  const publicApiErrorFilter = new PublicApiErrorFilter();
  return {
    // Code checks and previews: one function runner per process, shared with the other surfaces.
    imports: [FunctionRunnerModule.register(environment), ConfigApiModule.register(environment)],
    providers: [
      {
        provide: CONFIG_PROJECTION_METRICS,
        inject: [MetricsRegistry, ConfigProjectionRunner],
        useFactory: registerConfigProjectionMetrics,
      },
    ],
    edgeApi: 'config',
    errorFilter,
    claimedPaths: [
      { claims: (path) => path.startsWith('/v1beta'), errorFilter },
      {
        claims: (path) => path === PUBLIC_API_PREFIX || path.startsWith(`${PUBLIC_API_PREFIX}/`),
        errorFilter: publicApiErrorFilter,
      },
    ],
    onCreated: (app) => {
      serveConfigApiOpenApiDocument(app);
      servePublicApiOpenApiDocument(app);
    },
  };
}
