import { DynamicModule, Module } from '@nestjs/common';
import { Environment, RateLimiter } from '@tributary/platform';
import { ConfigReadModel } from '@tributary/config-projections';
import { ConfigApiAuthGuard, CONFIG_API_RATE_LIMITER } from './auth.guard';
import { BasicCredentialsChecker } from './basic-credentials.checker';
import { ConfigApiErrorFilter } from './config-api-error.filter';
import { ResourceLookup } from './resource-lookup.service';
import { REQUEST_BODY_LIMITS, RequestBodyLimits, RequestBodyLimitsGuard } from './request-body-limits.guard';

/**
 * What a `@ConfigApiController` outside the Config API needs: its guard (tokens from the shared read
 * model), its rate budget, its error filter and resource lookup. The standalone router imports this
 * to serve its dead-letter and metrics routes without the rest of `/v1beta` (and without the
 * instance bootstrap, which belongs to the Config API process alone). Needs `ConfigProjectionsModule`.
 */
@Module({})
export class ConfigApiAccessModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: ConfigApiAccessModule,
      global: true,
      providers: [
        {
          provide: CONFIG_API_RATE_LIMITER,
          useFactory: () => new RateLimiter(environment.CONFIG_API_RATE_LIMIT),
        },
        {
          provide: BasicCredentialsChecker,
          inject: [ConfigReadModel],
          useFactory: (readModel: ConfigReadModel) => new BasicCredentialsChecker(readModel, environment),
        },
        ConfigApiAuthGuard,
        {
          provide: REQUEST_BODY_LIMITS,
          useValue: {
            maxBytes: environment.CONFIG_API_MAX_BODY_BYTES,
            maxDepth: environment.CONFIG_API_MAX_JSON_DEPTH,
          } satisfies RequestBodyLimits,
        },
        RequestBodyLimitsGuard,
        ConfigApiErrorFilter,
        ResourceLookup,
      ],
      exports: [
        ConfigApiAuthGuard,
        BasicCredentialsChecker,
        CONFIG_API_RATE_LIMITER,
        REQUEST_BODY_LIMITS,
        RequestBodyLimitsGuard,
        ConfigApiErrorFilter,
        ResourceLookup,
      ],
    };
  }
}
