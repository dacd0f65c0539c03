import { DynamicModule, Module } from '@nestjs/common';
import { Environment, ENVIRONMENT, RateLimiter } from '@tributary/platform';
import { IngestMessagesController } from './ingest-messages/ingest-messages.controller';
import { IngestMessagesHandler, TRACKING_RATE_LIMITER } from './ingest-messages/ingest-messages.handler';
import { TrackingApiErrorFilter } from './shared/tracking-api-error.filter';
import { TrackingCounters } from './shared/tracking-counters';

/** The tracking API: `/v1/*` into the event log; needs `ConfigProjectionsModule` and `EventLogModule`. */
@Module({})
export class TrackingApiModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TrackingApiModule,
      controllers: [IngestMessagesController],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        {
          provide: TRACKING_RATE_LIMITER,
          useFactory: () =>
            environment.TRACKING_RATE_LIMIT ? new RateLimiter(environment.TRACKING_RATE_LIMIT, 1_000) : null,
        },
        TrackingCounters,
        TrackingApiErrorFilter,
        IngestMessagesHandler,
      ],
      exports: [TrackingCounters, TrackingApiErrorFilter],
    };
  }
}
