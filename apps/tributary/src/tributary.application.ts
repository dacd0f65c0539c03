import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createProcessApplication, Environment, HttpApplicationOptions } from '@tributary/platform';
import { tributarySurfaces } from './tributary.surfaces';

/** Builds the all-in-one application; `main.ts` and the tests start it the same way. */
export function createTributaryApplication(
  environment: Environment,
  options: HttpApplicationOptions = {},
): Promise<NestFastifyApplication> {
  return createProcessApplication(environment, tributarySurfaces(environment), options);
}
