import { DynamicModule, Module } from '@nestjs/common';
import type { Environment } from '@tributary/platform';
import { LiveEventsController } from './live-events.controller';
import { OpenLiveEventStreams } from './open-live-event-streams';
import { LiveEventLimits } from './server-sent-events';

/**
 * `GET .../sources/{src}/live-events`. Needs the message log (`EventLogModule`) and the Config API's
 * guard and resource lookup (`ConfigApiModule`, global).
 */
@Module({})
export class LiveEventsModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: LiveEventsModule,
      controllers: [LiveEventsController],
      providers: [
        {
          provide: LiveEventLimits,
          useFactory: () =>
            Object.assign(new LiveEventLimits(), {
              maxStreamsPerReader: environment.LIVE_EVENTS_MAX_STREAMS_PER_TOKEN,
              maxStreamsPerWorkspace: environment.LIVE_EVENTS_MAX_STREAMS_PER_WORKSPACE,
              maxStreams: environment.LIVE_EVENTS_MAX_STREAMS,
            }),
        },
        OpenLiveEventStreams,
      ],
    };
  }
}
