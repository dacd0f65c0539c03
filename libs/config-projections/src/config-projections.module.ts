import {
  DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { createEventStore, EVENT_STORE, EventStore } from '@tributary/event-store';
import { ConfigFoldFailure, ConfigProjectionRunner } from './config-projection.runner';
import { ConfigReadModel } from './config-read-model';

/** Fills the projections before the server takes requests, keeps them live, closes the store last. */
@Injectable()
export class ConfigProjectionService implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly runner: ConfigProjectionRunner,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.runner.start(this.store);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
    await this.store.close();
  }
}

const readModelLogger = new Logger('ConfigReadModel');

/** Names the event, never its data: config data can hold tenant secrets (encrypted, but still). */
function logFoldFailure(failure: ConfigFoldFailure): void {
  const reason = failure.error instanceof Error ? failure.error.message : String(failure.error);
  readModelLogger.error(
    failure.stage === 'fold'
      ? `config event ${failure.type} at position ${failure.position} (stream ${failure.streamName}) ` +
          `could not be folded into the read model and was skipped: ${reason}`
      : `a listener failed on config event ${failure.type} at position ${failure.position} ` +
          `(stream ${failure.streamName}): ${reason}`,
  );
}

/**
 * The config event store, the runner of its projections and the read model that queries them,
 * shared by every app of a process: every surface reads the model (write keys, destinations, ...).
 * Commands write through `ConfigCommandsModule` (`@tributary/config-commands`), which waits on it.
 */
@Module({})
export class ConfigProjectionsModule {
  static register(options: { eventStoreUrl?: string; dataDir: string }): DynamicModule {
    return {
      module: ConfigProjectionsModule,
      global: true,
      providers: [
        { provide: EVENT_STORE, useFactory: () => createEventStore(options) },
        { provide: ConfigProjectionRunner, useFactory: () => new ConfigProjectionRunner(logFoldFailure) },
        {
          provide: ConfigReadModel,
          inject: [ConfigProjectionRunner],
          useFactory: (runner: ConfigProjectionRunner) => new ConfigReadModel(runner),
        },
        ConfigProjectionService,
      ],
      exports: [EVENT_STORE, ConfigProjectionRunner, ConfigReadModel],
    };
  }
}
