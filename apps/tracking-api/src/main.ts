import 'reflect-metadata';
import { runProcess } from '@tributary/platform';
import { trackingApiSurface } from './tracking-api.module';

/**
 * The tracking API alone (`/v1/*`, `/token`, `/health/*`): stateless apart from its read model of the
 * config, so any number of replicas can run behind a load balancer. Every replica needs the same
 * `EVENTSTORE_URL` (or `DATA_DIR` with the SQLite store), `NATS_URL` and `TRIBUTARY_SECRET_KEY`.
 */
runProcess('tributary tracking-api', (environment) => [trackingApiSurface(environment)]);
