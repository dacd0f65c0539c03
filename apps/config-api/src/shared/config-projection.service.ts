import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import { EVENT_STORE, EventStore } from '@tributary/event-store';

/** Fills the read model before the server takes requests, keeps it live, closes the store last. */
@Injectable()
export class ConfigProjectionService implements OnModuleInit, OnApplicationShutdown {
  private readonly runner: ConfigProjectionRunner;

  constructor(@Inject(EVENT_STORE) private readonly store: EventStore, readModel: ConfigReadModel) {
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
