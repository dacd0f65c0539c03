import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { createEventLog, CreateEventLogOptions } from './create-event-log';
import { EVENT_LOG, type EventLog } from './event-log.port';
import { ATTEMPT_HISTORY } from './ports/attempt-history.port';
import { DEAD_LETTERS } from './ports/dead-letters.port';
import { FUNCTION_LOG_STORE } from './ports/function-logs.port';
import { LEASES } from './ports/leases.port';
import { MESSAGE_ERASURE } from './ports/message-erasure.port';
import { PROTOCOLS_OUTCOMES } from './ports/protocols-outcomes.port';
import { SEEN_ONCE } from './ports/seen-once.port';
import { TRACKING_LOG, type TrackingLog } from './ports/tracking-log.port';

export interface EventLogModuleOptions extends CreateEventLogOptions {
  /**
   * Puts something in front of the tracking log this process publishes through (the dedupe index);
   * what it returns is `TRACKING_LOG`, and closing it closes the log it wraps. Absent: the engine's
   * own tracking log.
   */
  wrapTrackingLog?: (log: TrackingLog) => Promise<TrackingLog>;
}

@Injectable()
class EventLogLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // What wraps the tracking log stops first (it may still be writing), then the connection.
    await this.trackingLog.close();
    await this.eventLog.close();
  }
}

/** The parts of the log, each its own token, all served by the one connection (`EVENT_LOG`). */
const PART_TOKENS = [
  DEAD_LETTERS,
  ATTEMPT_HISTORY,
  LEASES,
  SEEN_ONCE,
  MESSAGE_ERASURE,
  PROTOCOLS_OUTCOMES,
  FUNCTION_LOG_STORE,
];

/**
 * The event log, shared by every app of a process: the tracking API publishes into it, the router
 * consumes from it. One connection (JetStream) or one file (sqlite) serves every part, each under
 * its own token so that a caller injects only what it uses: `TRACKING_LOG`, `DEAD_LETTERS`,
 * `ATTEMPT_HISTORY`, `LEASES`, `SEEN_ONCE`, `MESSAGE_ERASURE`, `PROTOCOLS_OUTCOMES` and
 * `FUNCTION_LOG_STORE`. Closed when the application shuts down.
 */
@Module({})
export class EventLogModule {
  static register(options: EventLogModuleOptions): DynamicModule {
    const { wrapTrackingLog, ...engineOptions } = options;
    return {
      module: EventLogModule,
      global: true,
      providers: [
        {
          provide: EVENT_LOG,
          useFactory: () => {
            const logger = new Logger('EventLog');
            return createEventLog({ notice: (message) => logger.log(message), ...engineOptions });
          },
        },
        {
          provide: TRACKING_LOG,
          inject: [EVENT_LOG],
          useFactory: async (log: EventLog): Promise<TrackingLog> => {
            if (!wrapTrackingLog) return log;
            try {
              return await wrapTrackingLog(log);
            } catch (error) {
              await log.close();
              throw error;
            }
          },
        },
        ...PART_TOKENS.map((token) => ({ provide: token, useExisting: EVENT_LOG })),
        EventLogLifecycle,
      ],
      exports: [EVENT_LOG, TRACKING_LOG, ...PART_TOKENS],
    };
  }
}
