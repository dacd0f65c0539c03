import 'reflect-metadata';
import { runProcess } from '@tributary/platform';
import { configApiSurface } from './config-api.module';

/** The Config API alone (`/v1beta`, the console, `/health/*`). */
runProcess('tributary config-api', (environment) => [configApiSurface(environment)]);
