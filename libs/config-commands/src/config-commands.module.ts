import { DynamicModule, InjectionToken, Module } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '@tributary/event-store';
import { ConfigCommandHandler } from './config-command-handler';
import { ProjectionWaiter } from './projection-waiter.port';

/**
 * The command handler of a process, over the config event store (`EVENT_STORE`, provided by the
 * config projections) and whatever `projections` names as the read side to wait for.
 */
@Module({})
export class ConfigCommandsModule {
  static register(options: { projections: InjectionToken<ProjectionWaiter> }): DynamicModule {
    return {
      module: ConfigCommandsModule,
      global: true,
      providers: [
        {
          provide: ConfigCommandHandler,
          useFactory: (store: EventStore, projections: ProjectionWaiter) =>
            new ConfigCommandHandler(store, projections),
          inject: [EVENT_STORE, options.projections],
        },
      ],
      exports: [ConfigCommandHandler],
    };
  }
}
