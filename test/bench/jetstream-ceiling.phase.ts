/**
 * Phase 1 of `npm run bench`, the baselines of ingest: the stored JSON of every message published
 * straight to JetStream with its `Nats-Msg-Id`, from the bench process, the way `/v1/batch` would store
 * it, with no HTTP, parsing or normalization in between.
 *
 * - `pipelined`, the ceiling: through the project's own `PipelinedJetStreamPublisher`, the publisher
 *   the tracking API uses (one write of HPUB frames and one promise per batch), with the same batch size
 *   and concurrency. What is left between the two is the tracking API's own work, so
 *   `ratio tributary/ceiling` says how much of the publishing rate the API keeps.
 * - `stock-client`: the client library's own `js.publish`, one request per message, all publishes of a
 *   batch in flight. The baseline before the publisher existed, kept as a second line
 *   (`ratio tributary/stock-client`) to compare with earlier runs.
 *
 * Both publish to a stream of their own (`BENCH_CEILING`, configured like TRACKING, with its duplicate
 * window), so their ids never meet Tributary's; every id is fresh, so an acknowledgement that says
 * duplicate is a fault. The stream is deleted once its count is checked (`deleteCeilingStream`).
 */
import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS } from '@tributary/event-log';
import { PipelinedJetStreamPublisher } from '@tributary/event-log/testing';
import type { BenchMessages } from './bench-messages';
import { round, runClosedLoop, type PhaseResult } from './load-loop';
import { cpuMsPerThousand, processCpuTimeMs } from './tributary-server.process';

/** Same as the JetStream adapter's default publish timeout. */
const PUBLISH_TIMEOUT_MS = 2000;
export const CEILING_STREAM = 'BENCH_CEILING';
const SUBJECT = 'bench-ceiling.ws_bench.src_bench';

export type CeilingKind = 'pipelined' | 'stock-client';

export type CeilingResult = PhaseResult & {
  kind: CeilingKind;
  peakRssDuringPhaseMb: number;
  cpuMsPerThousandMessages: number;
  /** nats-server's CPU per 1,000 messages over the phase, warm-up included; null off Linux. */
  natsCpuMsPerThousandMessages: number | null;
  /** Messages acknowledged as stored, warm-up included (checked against the stream afterwards). */
  storedMessages: number;
  /** Messages in requests that failed: they may or may not be stored. */
  messagesOfFailedRequests: number;
  /** Acknowledgements that said duplicate: every id is fresh, so each one is a fault. */
  duplicateAcks: number;
};

export interface CeilingSettings {
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  batchSize: number;
}

/** A connection as the server's event log opens one (no async stack traces per request). */
async function connectLikeTheServer(natsUrl: string, name: string): Promise<NatsConnection> {
  return connect({ servers: natsUrl, name, noAsyncTraces: true });
}

/** Messages in a stream now (the lost/duplicated check compares this before and after). */
export async function streamMessageCount(natsUrl: string, stream: string): Promise<number> {
  const connection = await connectLikeTheServer(natsUrl, 'tributary-bench-count');
  try {
    const manager = await jetstreamManager(connection);
    return (await manager.streams.info(stream)).state.messages;
  } finally {
    await connection.close();
  }
}

/**
 * Creates `BENCH_CEILING` (once; adding the same configuration again is a no-op for the server), with
 * the duplicate window TRACKING has in the run: the dedupe guard window under the dedupe index, 24 h
 * without it.
 */
export async function ensureCeilingStream(natsUrl: string, duplicateWindowMs: number): Promise<void> {
  const connection = await connectLikeTheServer(natsUrl, 'tributary-bench-ceiling-setup');
  try {
    const manager = await jetstreamManager(connection);
    await manager.streams.add({
      name: CEILING_STREAM,
      subjects: ['bench-ceiling.>'],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: 1,
      max_age: nanos(DEFAULT_RETENTION_MS),
      duplicate_window: nanos(Math.min(duplicateWindowMs, DEFAULT_DEDUPE_WINDOW_MS)),
    });
  } finally {
    await connection.close();
  }
}

/**
 * Deletes `BENCH_CEILING` after the ingest phases. nats-server holds every id of a stream's duplicate
 * window in its heap, and the ceilings publish millions: left there, each of its garbage collections in
 * the later phases marked them all, over a second of CPU at a time (2026-11-29: Go's `scanobject` in
 * nats-server's profile during a stall of the steady load), which no Tributary deployment would carry.
 */
export async function deleteCeilingStream(natsUrl: string): Promise<void> {
  const connection = await connectLikeTheServer(natsUrl, 'tributary-bench-ceiling-setup');
  try {
    await (await jetstreamManager(connection)).streams.delete(CEILING_STREAM);
  } finally {
    await connection.close();
  }
}

export async function measureJetStreamCeiling(
  kind: CeilingKind,
  natsUrl: string,
  messages: BenchMessages,
  settings: CeilingSettings,
  natsPid?: number,
): Promise<CeilingResult> {
  const connection = await connectLikeTheServer(natsUrl, `tributary-bench-${kind}`);
  const pipelined =
    kind === 'pipelined' ? new PipelinedJetStreamPublisher(connection, PUBLISH_TIMEOUT_MS) : null;
  if (pipelined && pipelined.path !== 'frames')
    throw new Error(
      'the pipelined publisher fell back to message-by-message: the ceiling would not be its best',
    );
  const client = jetstream(connection);
  let storedMessages = 0;
  let duplicateAcks = 0;
  let messagesOfFailedRequests = 0;
  const publishBatch = async (): Promise<number> => {
    const { messageIds, payloads } = messages.storedBatch(settings.batchSize);
    let duplicates = 0;
    try {
      if (pipelined) {
        const acks = await pipelined.publishAll(
          payloads.map((payload, index) => ({ subject: SUBJECT, payload, messageId: messageIds[index] })),
        );
        for (const ack of acks) if (ack.duplicate) duplicates += 1;
      } else {
        const acks = await Promise.all(
          payloads.map((payload, index) =>
            client.publish(SUBJECT, payload, { msgID: messageIds[index], timeout: PUBLISH_TIMEOUT_MS }),
          ),
        );
        for (const ack of acks) if (ack.duplicate) duplicates += 1;
      }
    } catch (error) {
      messagesOfFailedRequests += payloads.length;
      throw error;
    }
    duplicateAcks += duplicates;
    storedMessages += payloads.length - duplicates;
    return payloads.length - duplicates;
  };

  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const cpuBefore = process.cpuUsage();
  const natsCpuBefore = natsPid === undefined ? null : processCpuTimeMs(natsPid);
  try {
    const result = await runClosedLoop({ ...settings, send: publishBatch });
    const cpu = process.cpuUsage(cpuBefore);
    const natsCpuAfter = natsPid === undefined ? null : processCpuTimeMs(natsPid);
    const totalMessages =
      result.acceptedMessages * ((settings.seconds + settings.warmupSeconds) / settings.seconds);
    return {
      ...result,
      kind,
      peakRssDuringPhaseMb: round(peakRss / (1024 * 1024), 1),
      // Includes the warm-up's share; an estimate of the publisher's cost per message.
      cpuMsPerThousandMessages: round(((cpu.user + cpu.system) / 1000 / totalMessages) * 1000, 2),
      natsCpuMsPerThousandMessages: cpuMsPerThousand(natsCpuBefore, natsCpuAfter, totalMessages),
      storedMessages,
      messagesOfFailedRequests,
      duplicateAcks,
    };
  } finally {
    clearInterval(sampler);
    pipelined?.close();
    await connection.close();
  }
}

/**
 * The lost/duplicated check of an ingest phase: a stream grew by exactly the messages acknowledged as
 * stored, give or take those of failed requests (a request that timed out may have been stored).
 * Returns what went wrong, or nothing.
 */
export function storedCountFailures(
  what: string,
  grewBy: number,
  acknowledged: number,
  ofFailedRequests: number,
): string[] {
  if (grewBy < acknowledged)
    return [
      `${what}: ${acknowledged - grewBy} of ${acknowledged} acknowledged messages are not in the stream (lost)`,
    ];
  if (grewBy > acknowledged + ofFailedRequests)
    return [
      `${what}: the stream holds ${grewBy - acknowledged - ofFailedRequests} messages more than were acknowledged ` +
        `or sent in failed requests (duplicated)`,
    ];
  return [];
}
