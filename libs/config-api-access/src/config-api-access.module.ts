import { DynamicModule, Module } from '@nestjs/common';
import { Environment, RateLimiter } from '@tributary/platform';
import { ConfigReadModel } from '@tributary/config-projections';
import { ConfigApiAuthGuard, CONFIG_API_RATE_LIMITER } from './auth.guard';
import { BasicCredentialsChecker } from './basic-credentials.checker';
import { ConfigApiErrorFilter } from './config-api-error.filter';
import { ResourceLookup } from './resource-lookup.service';
import { REQUEST_BODY_LIMITS, RequestBodyLimits, RequestBodyLimitsGuard } from './request-body-limits.guard';

/**
 * What every `@ConfigApiController` needs: its guard (tokens from the shared read model), its rate
 * budget, its body limits, its error filter and resource lookup. The Config API imports it, and so
 * does the router, to serve its dead-letter and metrics routes without the rest of `/v1beta` (and
 * without the instance bootstrap, which belongs to the Config API process alone). Global; needs
 * `ConfigProjectionsModule`.
 */
@Module({})
export class ConfigApiAccessModule {
  /** One per environment, so that a process serving the Config API and the router's routes holds
   *  one guard and one rate budget for both, however many of its surfaces import this. */
  private static readonly registered = new WeakMap<Environment, DynamicModule>();

  static register(environment: Environment): DynamicModule {
    let module = this.registered.get(environment);
    if (!module) {
      module = this.create(environment);
      this.registered.set(environment, module);
    }
    return module;
  }

  private static create(environment: Environment): DynamicModule {
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
