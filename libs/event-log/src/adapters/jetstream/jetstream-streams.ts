import {
  DiscardPolicy,
  JetStreamApiCodes,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { DEFAULT_SEEN_ONCE_CAPACITY, MAX_SEEN_ONCE_TTL_MS } from '../../event-log.port';
import { ATTEMPT_STREAM, ATTEMPT_SUBJECT_PREFIX } from './attempt-history';
import type { JetStreamEventLogOptions } from './jetstream-event-log.adapter';
import { JetStreamFunctionLogs } from './jetstream-function-logs';
import { JetStreamProtocolsOutcomes } from './jetstream-protocols-outcomes';
import { isApiError, type JetStreamSession } from './jetstream-session';

export const TRACKING_STREAM = 'TRACKING';
export const DEAD_LETTER_STREAM = 'DEADLETTER';
export const LEASE_STREAM = 'LEASES';
export const SEEN_ONCE_STREAM = 'SEEN_ONCE';
export const TRACKING_SUBJECT_PREFIX = 'tracking';
export const DEAD_LETTER_SUBJECT_PREFIX = 'deadletter';
export const LEASE_SUBJECT_PREFIX = 'lease';
export const SEEN_ONCE_SUBJECT_PREFIX = 'seen';

/** The subjects of `TRACKING` a consumer or a tail reads: one source's, or every source's. */
export function trackingFilter(sourceId: string | undefined): string {
  return sourceId === undefined ? `${TRACKING_SUBJECT_PREFIX}.>` : `${TRACKING_SUBJECT_PREFIX}.*.${sourceId}`;
}

/** The settings the streams are made from. */
export type StreamSettings = Pick<
  JetStreamEventLogOptions,
  'dedupeWindowMs' | 'retentionMs' | 'replicas' | 'trackingDuplicateWindowMs' | 'seenOnceCapacity' | 'notice'
>;

/** Creates every stream of the log, or brings an existing one to the settings. */
export async function ensureStreams(session: JetStreamSession, options: StreamSettings): Promise<void> {
  const { dedupeWindowMs, retentionMs } = options;
  const replicas = options.replicas ?? 1;
  // A single server refuses to create a replicated stream but accepts raising an existing one, and
  // then keeps one copy anyway: refuse here, so the setting never gives a false sense of safety.
  if (replicas > 1 && !session.connection.info?.cluster) {
    throw new Error(
      `NATS_STREAM_REPLICAS is ${replicas}, but the NATS server at ${session.connection.getServer()} is not ` +
        'part of a JetStream cluster: a single server keeps one replica (use 1, or run a cluster)',
    );
  }
  const common: Partial<StreamConfig> = {
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
    max_age: nanos(retentionMs),
    duplicate_window: nanos(dedupeWindowMs),
  };
  await ensureStream(session, options, {
    ...common,
    name: TRACKING_STREAM,
    subjects: [`${TRACKING_SUBJECT_PREFIX}.>`],
    duplicate_window: nanos(options.trackingDuplicateWindowMs ?? dedupeWindowMs),
  });
  await ensureStream(session, options, {
    ...common,
    name: DEAD_LETTER_STREAM,
    subjects: [`${DEAD_LETTER_SUBJECT_PREFIX}.>`],
  });
  // Only a lease's last value matters; one not written for the retention is an abandoned job's.
  await ensureStream(session, options, {
    ...common,
    name: LEASE_STREAM,
    subjects: [`${LEASE_SUBJECT_PREFIX}.>`],
    max_msgs_per_subject: 1,
  });
  // Short-lived one-time keys: their own age limit (not the retention), a hard count limit, and
  // refusal rather than eviction when full.
  await ensureStream(session, options, {
    ...common,
    name: SEEN_ONCE_STREAM,
    subjects: [`${SEEN_ONCE_SUBJECT_PREFIX}.>`],
    max_msgs_per_subject: 1,
    max_age: nanos(MAX_SEEN_ONCE_TTL_MS),
    duplicate_window: nanos(Math.min(dedupeWindowMs, 60_000)),
    max_msgs: options.seenOnceCapacity ?? DEFAULT_SEEN_ONCE_CAPACITY,
    discard: DiscardPolicy.New,
  });
  await ensureStream(session, options, JetStreamProtocolsOutcomes.streamConfig(common, dedupeWindowMs));
  await ensureStream(session, options, JetStreamFunctionLogs.streamConfig(common));
  // Only a message's whole history (its subject's last message) matters, as with leases.
  await ensureStream(session, options, {
    ...common,
    name: ATTEMPT_STREAM,
    subjects: [`${ATTEMPT_SUBJECT_PREFIX}.>`],
    max_msgs_per_subject: 1,
  });
}

/** Creates the stream, or updates its retention, dedupe window and replicas when the settings changed. */
async function ensureStream(
  session: JetStreamSession,
  options: StreamSettings,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  const { manager } = session;
  try {
    const info = await manager.streams.info(config.name);
    if (info.config.num_replicas !== config.num_replicas) {
      // Said out loud: the servers copy the stream's messages to the new replicas (or drop copies).
      options.notice?.(
        `stream ${config.name}: replicas ${info.config.num_replicas} -> ${config.num_replicas} (NATS_STREAM_REPLICAS)`,
      );
    }
    if (
      info.config.max_age !== config.max_age ||
      info.config.duplicate_window !== config.duplicate_window ||
      info.config.num_replicas !== config.num_replicas ||
      (config.max_msgs !== undefined && info.config.max_msgs !== config.max_msgs)
    ) {
      await manager.streams.update(config.name, {
        ...info.config,
        max_age: config.max_age,
        duplicate_window: config.duplicate_window,
        num_replicas: config.num_replicas,
        ...(config.max_msgs !== undefined && { max_msgs: config.max_msgs }),
      });
    }
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    await manager.streams.add(config);
  }
  await untilStreamHasLeader(session, config);
}

/**
 * A replicated stream just created or resized elects a leader first (a few hundred ms); until then
 * every publish fails. Waiting here keeps that out of the first requests. Not fatal when it takes
 * longer: callers already treat a leaderless moment as the log being unavailable.
 */
async function untilStreamHasLeader(
  session: JetStreamSession,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  if ((config.num_replicas ?? 1) <= 1) return;
  const deadline = Date.now() + session.requestTimeoutMs;
  while (Date.now() < deadline) {
    const info = await session.manager.streams.info(config.name).catch(() => undefined);
    if (info?.cluster?.leader) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
