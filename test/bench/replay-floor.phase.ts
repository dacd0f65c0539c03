/**
 * The replay floor: how fast a router that does nothing but read a source's stored messages from
 * JetStream, POST them, signed, and ack them (`replay-floor.consumer.ts`, a process of its own as the
 * router is) delivers them to a receiver of the bench's kind. Every router does at least that much, so
 * its ratio to the delivery ceiling bounds what `ratio replay/ceiling` (and `ratio delivery/ceiling`,
 * which pays the ingest load on top) can read on the machine; Tributary's replay over it says how much
 * of what is possible the router keeps.
 *
 * It reads the source twice, on consumers of its own: all of it once to warm up, untimed, to a receiver
 * of its own, then all of it again, timed from the first to the last arrival, as a replay is measured.
 */
import { cpuUsPerMessage, runFloorProcess } from './floor-process';
import { round } from './load-loop';
import { processCpuTimeMs } from './tributary-server.process';
import { arrivalSpanSeconds, BenchWebhookReceiver, receiverFailures } from './webhook-receiver';

export interface ReplayFloorResult {
  messages: number;
  spanSeconds: number;
  messagesPerSecond: number;
  /** CPU µs per timed message: the floor's process, this thread (the receiver), nats-server; null off Linux. */
  cpuUs: { router: number; receiver: number; natsServer: number; total: number } | null;
  /** Messages lost, duplicated or wrongly signed; the run fails on any. */
  failures: string[];
}

function readings(natsPid: number, floorPid: number) {
  const { user, system } = process.threadCpuUsage();
  return {
    router: processCpuTimeMs(floorPid),
    receiver: (user + system) / 1000,
    natsServer: processCpuTimeMs(natsPid),
  };
}

export async function measureReplayFloor(options: {
  natsUrl: string;
  natsPid: number;
  /** Of its consumers (deleted once read): unique in the stream. */
  name: string;
  sourceId: string;
  /** How many messages the source holds: each pass ends when all are acked. */
  messages: number;
  sharedSecret: string;
}): Promise<ReplayFloorResult> {
  const { messages, sharedSecret } = options;
  const warmupReceiver = await BenchWebhookReceiver.start(`${options.name}-warmup`, sharedSecret);
  const receiver = await BenchWebhookReceiver.start(options.name, sharedSecret);
  try {
    const { before, after } = await runFloorProcess(
      'replay-floor.consumer.ts',
      {
        NATS_URL: options.natsUrl,
        NAME: options.name,
        SHARED_SECRET: sharedSecret,
        WARMUP: `${options.sourceId} ${messages} ${warmupReceiver.url}`,
        TIMED: `${options.sourceId} ${messages} ${receiver.url}`,
      },
      (floorPid) => readings(options.natsPid, floorPid),
    );
    const counts = receiver.snapshot();
    const spanSeconds = arrivalSpanSeconds(counts);
    const router = cpuUsPerMessage(before.router, after.router, messages);
    const receiverCpu = cpuUsPerMessage(before.receiver, after.receiver, messages)!;
    const natsServer = cpuUsPerMessage(before.natsServer, after.natsServer, messages);
    return {
      messages,
      spanSeconds: round(spanSeconds, 3),
      messagesPerSecond: spanSeconds > 0 ? Math.round(counts.distinctMessages / spanSeconds) : 0,
      cpuUs:
        router === null || natsServer === null
          ? null
          : { router, receiver: receiverCpu, natsServer, total: round(router + receiverCpu + natsServer, 1) },
      failures: [
        ...receiverFailures(`replay floor`, counts, messages),
        ...receiverFailures(`replay floor's warm-up`, warmupReceiver.snapshot(), messages),
      ],
    };
  } finally {
    await Promise.all([receiver.close(), warmupReceiver.close()]);
  }
}
