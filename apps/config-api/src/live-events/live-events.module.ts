import { Module } from '@nestjs/common';
import { LiveEventsController } from './live-events.controller';
import { LiveEventLimits } from './server-sent-events';

/**
 * `GET .../sources/{src}/live-events`. Needs the message log (`EventLogModule`) and the Config API's
 * guard and resource lookup (`ConfigApiModule`, global).
 */
@Module({
  controllers: [LiveEventsController],
  providers: [LiveEventLimits],
})
export class LiveEventsModule {}
