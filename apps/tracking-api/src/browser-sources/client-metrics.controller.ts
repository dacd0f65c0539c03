import { Controller, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { trackingSuccessBody, TrackingSuccessBody } from '@tributary/contracts';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';

/**
 * `POST /v1/m`: where Segment's libraries send their own usage counters when the settings point
 * `metrics.host` here. Tributary's settings turn them off (`sampleRate` 0); a library configured
 * otherwise still gets a success, and the counters are dropped: they describe the library, not users.
 */
@ApiExcludeController()
@Controller('v1')
@UseFilters(TrackingApiErrorFilter)
export class ClientMetricsController {
  @Post('m')
  @HttpCode(200)
  accept(): TrackingSuccessBody {
    return trackingSuccessBody([]);
  }
}
