import { SecretBoxModule } from '@tributary/auth';
import { ConfigCommandsModule } from '@tributary/config-commands';
import { ConfigProjectionsModule, ConfigReadModel } from '@tributary/config-projections';
import { deduplicateTrackingLog } from '@tributary/dedupe';
import { dedupeWindowsOf, EventLogModule, type CreateEventLogOptions } from '@tributary/event-log';
import { join } from 'node:path';
import type { Environment } from './environment';

/**
 * The shared parts every Tributary process wires the same way from its environment: the config
 * event store with its read model and the command handler that writes through both (waiting on
 * that model for read-your-writes), the deployment's secret box, and (where the process needs it)
 * the tracking message log. One place, so the all-in-one server and each app cannot drift apart.
 */
export function configStoreModules(environment: Environment) {
  return [
    ConfigProjectionsModule.register({
      eventStoreUrl: environment.EVENTSTORE_URL,
      dataDir: environment.DATA_DIR,
    }),
    ConfigCommandsModule.register({ projections: ConfigReadModel }),
    SecretBoxModule.register({
      secretKeyHex: environment.TRIBUTARY_SECRET_KEY,
      previousKeysHex: environment.TRIBUTARY_PREVIOUS_SECRET_KEYS,
      keyFile: join(environment.DATA_DIR, 'deployment.key'),
    }),
  ];
}

/**
 * The event log, every port of it from one connection. `publishesTracking`: false for a process that
 * only reads the log (a router, a Config API): it runs no dedupe index. One that publishes on NATS
 * with `DEDUPE_INDEX=on` puts the index in front of its tracking log (`@tributary/dedupe`).
 */
export function eventLogModule(environment: Environment, { publishesTracking = true } = {}) {
  const engine: CreateEventLogOptions = {
    natsUrl: environment.NATS_URL,
    dataDir: environment.DATA_DIR,
    dedupeWindowMs: environment.DEDUPE_WINDOW,
    retentionMs: environment.RETENTION,
    streamReplicas: environment.NATS_STREAM_REPLICAS,
    pullExpiresMs: environment.ROUTER_PULL_EXPIRES,
    dedupeIndex: environment.DEDUPE_INDEX === 'on',
    dedupeGuardWindowMs: environment.DEDUPE_GUARD_WINDOW,
  };
  const { windowMs, guardWindowMs } = dedupeWindowsOf(engine);
  const natsUrl = environment.NATS_URL;
  const indexed = publishesTracking && natsUrl !== undefined && guardWindowMs !== undefined;
  return EventLogModule.register({
    ...engine,
    wrapTrackingLog: indexed
      ? (log) =>
          deduplicateTrackingLog(log, {
            natsUrl,
            windowMs,
            guardWindowMs,
            indexDir: environment.DEDUPE_INDEX_DIR ?? environment.DATA_DIR,
            maxBytes: environment.DEDUPE_INDEX_MAX_BYTES,
          })
      : undefined,
  });
}
