import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { createEventLog, CreateEventLogOptions } from './create-event-log';
import { EVENT_LOG, EventLog } from './event-log.port';
import { FUNCTION_LOG_STORE } from './function-logs.port';

@Injectable()
class EventLogLifecycle implements OnApplicationShutdown {
  constructor(@Inject(EVENT_LOG) private readonly eventLog: EventLog) {}

  async onApplicationShutdown(): Promise<void> {
    await this.eventLog.close();
  }
}

/**
 * The tracking message log, shared by every app of a process: the tracking API publishes into it,
 * the router consumes from it. Closed when the application shuts down. It also serves, from the
 * same connection or file, the functions' logs (`FUNCTION_LOG_STORE`).
 */
@Module({})
export class EventLogModule {
  static register(options: CreateEventLogOptions): DynamicModule {
    return {
      module: EventLogModule,
      global: true,
      providers: [
        {
          provide: EVENT_LOG,
          useFactory: () => {
            const logger = new Logger('EventLog');
            return createEventLog({ notice: (message) => logger.log(message), ...options });
          },
        },
        { provide: FUNCTION_LOG_STORE, useExisting: EVENT_LOG },
        EventLogLifecycle,
      ],
      exports: [EVENT_LOG, FUNCTION_LOG_STORE],
    };
  }
}
