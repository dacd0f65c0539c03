import { Module } from '@nestjs/common';
import { LiveEventsController } from './live-events.controller';
import { OpenLiveEventStreams } from './open-live-event-streams';
import { LiveEventLimits } from './server-sent-events';

/**
 * `GET .../sources/{src}/live-events`. Needs the message log (`EventLogModule`) and the Config API's
 * guard and resource lookup (`ConfigApiModule`, global).
 */
@Module({
  controllers: [LiveEventsController],
  providers: [LiveEventLimits, OpenLiveEventStreams],
})
export class LiveEventsModule {}
