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
import { ConfigProjectionRunner } from './config-projection.runner';
import { ConfigFoldFailure, ConfigReadModel } from './config-read-model';

/** Fills the read model before the server takes requests, keeps it live, closes the store last. */
@Injectable()
export class ConfigProjectionService implements OnModuleInit, OnApplicationShutdown {
  private readonly runner: ConfigProjectionRunner;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    readModel: ConfigReadModel,
  ) {
    this.runner = new ConfigProjectionRunner(store, readModel);
  }

  async onModuleInit(): Promise<void> {
    await this.runner.start();
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
 * The config event store and its read model, shared by every app of a process: every surface reads
 * the model (write keys, destinations, ...). Commands write through `ConfigCommandsModule`
 * (`@tributary/config-commands`), which waits on this model.
 */
@Module({})
export class ConfigProjectionsModule {
  static register(options: { eventStoreUrl?: string; dataDir: string }): DynamicModule {
    return {
      module: ConfigProjectionsModule,
      global: true,
      providers: [
        { provide: EVENT_STORE, useFactory: () => createEventStore(options) },
        { provide: ConfigReadModel, useFactory: () => new ConfigReadModel(logFoldFailure) },
        ConfigProjectionService,
      ],
      exports: [EVENT_STORE, ConfigReadModel],
    };
  }
}
