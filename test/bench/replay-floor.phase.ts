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
import { spawn } from 'node:child_process';
import { join } from 'node:path';
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
    const root = join(__dirname, '..', '..');
    const child = spawn(
      process.execPath,
      ['--require', join(root, 'test/support/swc-register.js'), join(__dirname, 'replay-floor.consumer.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          NATS_URL: options.natsUrl,
          NAME: options.name,
          SHARED_SECRET: sharedSecret,
          WARMUP: `${options.sourceId} ${messages} ${warmupReceiver.url}`,
          TIMED: `${options.sourceId} ${messages} ${receiver.url}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const marks: { before?: ReturnType<typeof readings>; after?: ReturnType<typeof readings> } = {};
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        output = (output + text).slice(-4000);
        if (text.includes('warmed up')) marks.before = readings(options.natsPid, child.pid!);
        if (text.includes('done')) marks.after = readings(options.natsPid, child.pid!);
      });
      child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
      child.once('exit', (code) =>
        code === 0 && marks.before && marks.after
          ? resolve()
          : reject(new Error(`the replay floor exited with ${code}:\n${output}`)),
      );
      child.once('error', reject);
    });
    const counts = receiver.snapshot();
    const spanSeconds = arrivalSpanSeconds(counts);
    const perMessage = (from: number | null | undefined, to: number | null | undefined) =>
      from === null || from === undefined || to === null || to === undefined
        ? null
        : round(((to - from) * 1000) / messages, 1);
    const { before, after } = marks as Required<typeof marks>;
    const router = perMessage(before.router, after.router);
    const receiverCpu = perMessage(before.receiver, after.receiver)!;
    const natsServer = perMessage(before.natsServer, after.natsServer);
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
