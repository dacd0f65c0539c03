import 'reflect-metadata';
import { runProcess } from '@tributary/platform';
import { routerSurface } from './router.module';

/**
 * The router alone: the destination consumers, replays and redrives, with `/health/*` and its own
 * Config API routes (dead letters, delivery metrics) behind the Config API's guard.
 *
 * Several replicas may run against one JetStream: each destination's consumer has the same durable
 * name in every replica (`destination_<sourceId>_<slug>`), and JetStream hands each message to one
 * of the processes pulling from a durable consumer, so the replicas share the work instead of
 * delivering twice. See README "Scaling out" for replays, redrives and metrics.
 */
runProcess('tributary router', (environment) => [routerSurface(environment)]);
