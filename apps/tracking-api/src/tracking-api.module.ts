import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { createEventLog, EVENT_LOG, EventLog } from '@tributary/event-log';
import { Environment, ENVIRONMENT, RateLimiter } from '@tributary/platform';
import { IngestMessagesController } from './ingest-messages/ingest-messages.controller';
import { IngestMessagesHandler, TRACKING_RATE_LIMITER } from './ingest-messages/ingest-messages.handler';
import { TrackingApiErrorFilter } from './shared/tracking-api-error.filter';
import { TrackingCounters } from './shared/tracking-counters';

@Injectable()
class EventLogLifecycle implements OnApplicationShutdown {
  constructor(@Inject(EVENT_LOG) private readonly eventLog: EventLog) {}

  async onApplicationShutdown(): Promise<void> {
    await this.eventLog.close();
  }
}

/** The tracking API: `/v1/*` into the event log; needs `ConfigProjectionsModule` for write keys. */
@Module({})
export class TrackingApiModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TrackingApiModule,
      controllers: [IngestMessagesController],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        {
          provide: EVENT_LOG,
          useFactory: () =>
            createEventLog({
              natsUrl: environment.NATS_URL,
              dataDir: environment.DATA_DIR,
              dedupeWindowMs: environment.DEDUPE_WINDOW,
              retentionMs: environment.RETENTION,
            }),
        },
        {
          provide: TRACKING_RATE_LIMITER,
          useFactory: () =>
            environment.TRACKING_RATE_LIMIT ? new RateLimiter(environment.TRACKING_RATE_LIMIT, 1_000) : null,
        },
        EventLogLifecycle,
        TrackingCounters,
        TrackingApiErrorFilter,
        IngestMessagesHandler,
      ],
      exports: [EVENT_LOG, TrackingCounters, TrackingApiErrorFilter],
    };
  }
}
