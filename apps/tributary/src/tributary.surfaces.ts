import type { Environment, ServedSurface } from '@tributary/platform';
import { configApiSurface } from '../../config-api/src/config-api.module';
import { routerSurface } from '../../router/src/router.module';
import { trackingApiSurface } from '../../tracking-api/src/tracking-api.module';

/**
 * Every Tributary surface in one process on one port: the embedded default behind `npm start`. The
 * order decides whose error shape answers an unrouted request: `/v1beta` the Config API's, `/token`
 * OAuth's, every other path the tracking API's.
 */
export function tributarySurfaces(environment: Environment): ServedSurface[] {
  return [configApiSurface(environment), trackingApiSurface(environment), routerSurface(environment)];
}
