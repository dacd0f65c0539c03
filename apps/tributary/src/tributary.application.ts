import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  createHttpApplication,
  Environment,
  HttpApplicationOptions,
  httpApplicationOptionsOf,
} from '@tributary/platform';
import { serveConfigApiOpenApiDocument } from '@tributary/config-api-access';
import { TributaryModule } from './tributary.module';

/** Builds the all-in-one application; `main.ts` and the tests start it the same way. */
export async function createTributaryApplication(
  environment: Environment,
  options: HttpApplicationOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApplication(TributaryModule.register(environment), environment.LOG_LEVEL, {
    ...httpApplicationOptionsOf(environment),
    ...options,
  });
  serveConfigApiOpenApiDocument(app);
  return app;
}
