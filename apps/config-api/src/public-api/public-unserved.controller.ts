import { All } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { PublicApiController } from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';

/**
 * Parts of the Public API subset not served yet: answered 501 in `{errors}`, after authentication,
 * so that a client learns what is missing rather than meeting a 404 that reads as "deleted".
 */
@ApiExcludeController()
@PublicApiController()
export class PublicUnservedController {
  @All(['regulations', 'regulations/*', 'suppressions'])
  regulations(): never {
    throw PublicApiError.notImplemented('regulations and suppressions');
  }
}
