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
import { ConfigApiAuthGuard, CONFIG_API_RATE_LIMITER } from './shared/auth.guard';
import { ConfigApiErrorFilter } from './shared/error.filter';
import { RateLimiter } from '@tributary/platform';
import { ResourceLookup } from './shared/resource-lookup.service';
import { SourcesController } from './sources/sources.controller';
import { TrackingPlansController } from './tracking-plans/tracking-plans.controller';
import { UnimplementedController } from './unimplemented/unimplemented.controller';
import { WorkspacesController } from './workspaces/workspaces.controller';

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
        UnimplementedController,
      ],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        {
          provide: CONFIG_API_RATE_LIMITER,
          useFactory: () => new RateLimiter(environment.CONFIG_API_RATE_LIMIT),
        },
        { provide: APP_PIPE, useClass: ZodValidationPipe },
        ResourceLookup,
        DestinationConfigMapper,
        ConfigApiAuthGuard,
        ConfigApiErrorFilter,
        InstanceBootstrapService,
      ],
      exports: [ConfigApiErrorFilter, ConfigApiAuthGuard, CONFIG_API_RATE_LIMITER, ResourceLookup],
    };
  }
}
