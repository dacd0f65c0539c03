import { DynamicModule, Module } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import { Environment, ENVIRONMENT, MetricsRegistry, ServedSurface } from '@tributary/platform';
import { ZodValidationPipe } from 'nestjs-zod';
import { AccessTokenCommands } from './access-tokens/access-token.commands';
import { AccessTokensController } from './access-tokens/access-tokens.controller';
import { AuditEventsController } from './audit-events/audit-events.controller';
import { OAuthApplicationCommands } from './oauth-applications/oauth-application.commands';
import { OAuthApplicationsController } from './oauth-applications/oauth-applications.controller';
import { ReplayCommands } from './replays/replay.commands';
import { ReplaysController } from './replays/replays.controller';
import { InstanceBootstrapService } from './bootstrap/instance-bootstrap.service';
import { ConsoleModule } from './console/console.module';
import { LiveEventsModule } from './live-events/live-events.module';
import { CatalogController } from './catalog/catalog.controller';
import { DestinationConfigMapper } from './destinations/destination-config';
import { DestinationCommands } from './destinations/destination.commands';
import { DestinationsController } from './destinations/destinations.controller';
import { FilterPreviewController } from './filter-preview/filter-preview.controller';
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
import { ViolationsController } from './violations/violations.controller';
import { WorkspaceCommands } from './workspaces/workspace.commands';
import { WorkspacesController } from './workspaces/workspaces.controller';
import { WORKSPACE_QUOTA_LIMITS, WorkspaceQuotaLimits, WorkspaceQuotas } from './shared/workspace-quotas';

/**
 * The Config API: `/v1beta` over the config event store; needs `ConfigProjectionsModule`,
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
        FilterPreviewController,
        TrackingPlansController,
        ReplaysController,
        OAuthApplicationsController,
        AuditEventsController,
        ViolationsController,
        UnimplementedController,
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
        TrackingPlanCommands,
        SourceCommands,
        DestinationCommands,
        FilterCommands,
        OAuthApplicationCommands,
        AccessTokenCommands,
        WorkspaceCommands,
        ReplayCommands,
        DestinationConfigMapper,
        InstanceBootstrapService,
        SourceConnectionsHandler,
      ],
    };
  }
}

/**
 * The Config API as a process serves it: `/v1beta` answering its errors in `{error, code}`, the
 * read model's metrics, and the OpenAPI document of the `/v1beta` routes the process serves.
 */
export function configApiSurface(environment: Environment): ServedSurface {
  const errorFilter = new ConfigApiErrorFilter();
  return {
    imports: [ConfigApiModule.register(environment)],
    providers: [
      {
        provide: CONFIG_PROJECTION_METRICS,
        inject: [MetricsRegistry, ConfigProjectionRunner],
        useFactory: registerConfigProjectionMetrics,
      },
    ],
    edgeApi: 'config',
    errorFilter,
    claimedPaths: [{ claims: (path) => path.startsWith('/v1beta'), errorFilter }],
    onCreated: serveConfigApiOpenApiDocument,
  };
}
