import { DynamicModule, Module } from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { ZodValidationPipe } from 'nestjs-zod';
import { AccessTokensController } from './access-tokens/access-tokens.controller';
import { AuditEventsController } from './audit-events/audit-events.controller';
import { OAuthApplicationsController } from './oauth-applications/oauth-applications.controller';
import { ReplaysController } from './replays/replays.controller';
import { InstanceBootstrapService } from './bootstrap/instance-bootstrap.service';
import { ConsoleModule } from './console/console.module';
import { LiveEventsModule } from './live-events/live-events.module';
import { CatalogController } from './catalog/catalog.controller';
import { DestinationConfigMapper } from './destinations/destination-config';
import { DestinationsController } from './destinations/destinations.controller';
import { FilterPreviewController } from './filter-preview/filter-preview.controller';
import { FiltersController } from './filters/filters.controller';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  ConfigApiAuthGuard,
  CONFIG_API_RATE_LIMITER,
  BasicCredentialsChecker,
  ConfigApiErrorFilter,
  ResourceLookup,
  REQUEST_BODY_LIMITS,
  RequestBodyLimits,
  RequestBodyLimitsGuard,
} from '@tributary/config-api-access';
import { RateLimiter } from '@tributary/platform';
import { SourcesController } from './sources/sources.controller';
import { TrackingPlansController } from './tracking-plans/tracking-plans.controller';
import { UnimplementedController } from './unimplemented/unimplemented.controller';
import { ViolationsController } from './violations/violations.controller';
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
      // Global so the router's Config API routes (dead letters, metrics) share its guard and rate budget.
      global: true,
      imports: [LiveEventsModule, ConsoleModule],
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
        {
          provide: CONFIG_API_RATE_LIMITER,
          useFactory: () => new RateLimiter(environment.CONFIG_API_RATE_LIMIT),
        },
        {
          provide: REQUEST_BODY_LIMITS,
          useValue: {
            maxBytes: environment.CONFIG_API_MAX_BODY_BYTES,
            maxDepth: environment.CONFIG_API_MAX_JSON_DEPTH,
          } satisfies RequestBodyLimits,
        },
        RequestBodyLimitsGuard,
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
          } satisfies WorkspaceQuotaLimits,
        },
        WorkspaceQuotas,
        ResourceLookup,
        DestinationConfigMapper,
        {
          provide: BasicCredentialsChecker,
          inject: [ConfigReadModel],
          useFactory: (readModel: ConfigReadModel) => new BasicCredentialsChecker(readModel, environment),
        },
        ConfigApiAuthGuard,
        ConfigApiErrorFilter,
        InstanceBootstrapService,
      ],
      exports: [
        ConfigApiErrorFilter,
        ConfigApiAuthGuard,
        BasicCredentialsChecker,
        CONFIG_API_RATE_LIMITER,
        REQUEST_BODY_LIMITS,
        RequestBodyLimitsGuard,
        ResourceLookup,
      ],
    };
  }
}
