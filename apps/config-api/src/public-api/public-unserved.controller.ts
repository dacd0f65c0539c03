import { All } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { PublicApiController } from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';

/**
 * Parts of the Public API subset not served: answered 501 in `{errors}`, after authentication, so that
 * a client learns what is missing rather than meeting a 404 that reads as "deleted". Tributary has no
 * cloud sources, so it has no regulations of theirs (docs/regulations.md).
 */
@ApiExcludeController()
@PublicApiController()
export class PublicUnservedController {
  @All(['regulations/cloudsources', 'regulations/cloudsources/*'])
  cloudSourceRegulations(): never {
    throw PublicApiError.notImplemented('regulations of cloud sources');
  }
}
