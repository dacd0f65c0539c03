/**
 * The replay floor against the delivery ceiling, alone, apart from Tributary: how much of the
 * ceiling (`delivery-ceiling.phase.ts`, the plain client POSTing the same signed bodies) a router
 * keeps that does nothing but read the stored messages from JetStream, POST them and ack them
 * (`replay-floor.consumer.ts`). A router does at least that much, so this ratio bounds what
 * `ratio replay/ceiling` and `ratio delivery/ceiling` can read on the machine (BENCHMARKS.md).
 *
 *   node --require ./test/support/swc-register.js test/bench/replay-floor.measure.ts [messages] [rounds]
 *
 * A nats-server of its own; the bench's messages stored once (`messages`, default 80,000, timed, and
 * 10,000 more to warm up, each on a source of its own); then `rounds` (default 3) alternating rounds
 * of the ceiling and the floor, each warmed up first on its own receiver. Each round prints its
 * messages/s (first to last arrival, as the bench measures delivery) and CPU µs per message, by
 * process, over the timed messages alone (`/proc`, Linux only). Fails on a message lost, duplicated
 * or wrongly signed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { createBenchMessages, type BenchMessages } from './bench-messages';
import { measureDeliveryCeiling } from './delivery-ceiling.phase';
import { medianBy } from './load-loop';
import { processCpuTimeMs } from './tributary-server.process';
import { arrivalSpanSeconds, BenchWebhookReceiver, receiverFailures } from './webhook-receiver';

const BATCH = 100;
const WARMUP_MESSAGES = 10_000;
const IN_FLIGHT = 64;

interface RoundFigures {
  messagesPerSecond: number;
  /** CPU µs per timed message: the client or router, the receiver's process, nats-server. */
  cpuUs: { sender: number; receiver: number; nats: number };
}

async function store(
  log: Awaited<ReturnType<typeof createEventLog>>,
  messages: BenchMessages,
  sourceId: string,
  total: number,
): Promise<void> {
  for (let stored = 0; stored < total; stored += BATCH) {
    const { messageIds, payloads } = messages.storedBatch(Math.min(BATCH, total - stored));
    const outcomes = await log.publishBatch(
      payloads.map((payload, index) => ({
        workspaceId: 'bench',
        sourceId,
        messageId: messageIds[index]!,
        payload: JSON.parse(payload) as Record<string, unknown>,
      })),
    );
    if (outcomes.some((outcome) => outcome.duplicate)) throw new Error('a fresh messageId was a duplicate');
  }
}

/** This process's CPU ms so far (every thread). */
function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function measureCeiling(messages: BenchMessages, total: number, natsPid: number, secret: string) {
  let startCpu = 0;
  let startNats = 0;
  let endCpu = 0;
  let endNats = 0;
  const result = await measureDeliveryCeiling({
    messages,
    sharedSecret: secret,
    requests: total,
    warmupRequests: WARMUP_MESSAGES,
    concurrency: IN_FLIGHT,
    client: 'undici',
    timed: {
      started: () => {
        startCpu = ownCpuMs();
        startNats = processCpuTimeMs(natsPid)!;
      },
      ended: () => {
        endCpu = ownCpuMs();
        endNats = processCpuTimeMs(natsPid)!;
      },
    },
  });
  if (result.failures.length > 0) throw new Error(result.failures.join('; '));
  const client = result.clientCpuMs ?? 0;
  const figures: RoundFigures = {
    messagesPerSecond: result.messagesPerSecond,
    cpuUs: {
      sender: (client * 1000) / total,
      receiver: ((endCpu - startCpu - client) * 1000) / total,
      nats: ((endNats - startNats) * 1000) / total,
    },
  };
  return figures;
}

async function measureFloor(natsUrl: string, natsPid: number, round: number, total: number, secret: string) {
  const warmupReceiver = await BenchWebhookReceiver.start('floor-warmup', secret);
  const receiver = await BenchWebhookReceiver.start('floor', secret);
  try {
    const root = join(__dirname, '..', '..');
    const child = spawn(
      process.execPath,
      ['--require', join(root, 'test/support/swc-register.js'), join(__dirname, 'replay-floor.consumer.ts')],
      {
        cwd: root,
        env: {
          ...process.env,
          NATS_URL: natsUrl,
          ROUND: String(round),
          SHARED_SECRET: secret,
          WARMUP: `warmup ${WARMUP_MESSAGES} ${warmupReceiver.url}`,
          TIMED: `timed ${total} ${receiver.url}`,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let startCpu = 0;
    let startChild = 0;
    let startNats = 0;
    let endCpu = 0;
    let endChild = 0;
    let endNats = 0;
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        if (text.includes('warmed up')) {
          startCpu = ownCpuMs();
          startChild = processCpuTimeMs(child.pid!)!;
          startNats = processCpuTimeMs(natsPid)!;
        }
        if (text.includes('done')) {
          endCpu = ownCpuMs();
          endChild = processCpuTimeMs(child.pid!)!;
          endNats = processCpuTimeMs(natsPid)!;
        }
      });
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`the floor exited with ${code}`)),
      );
      child.once('error', reject);
    });
    const counts = receiver.snapshot();
    const failures = [
      ...receiverFailures('replay floor', counts, total),
      ...receiverFailures("replay floor's warm-up", warmupReceiver.snapshot(), WARMUP_MESSAGES),
    ];
    if (failures.length > 0) throw new Error(failures.join('; '));
    const figures: RoundFigures = {
      messagesPerSecond: Math.round(counts.distinctMessages / arrivalSpanSeconds(counts)),
      cpuUs: {
        sender: ((endChild - startChild) * 1000) / total,
        receiver: ((endCpu - startCpu) * 1000) / total,
        nats: ((endNats - startNats) * 1000) / total,
      },
    };
    return figures;
  } finally {
    await Promise.all([receiver.close(), warmupReceiver.close()]);
  }
}

function describe(figures: RoundFigures): string {
  const { sender, receiver, nats } = figures.cpuUs;
  return (
    `${figures.messagesPerSecond.toLocaleString('en-US')} messages/s, CPU µs per message ` +
    `${(sender + receiver + nats).toFixed(1)} (sender ${sender.toFixed(1)}, receiver ${receiver.toFixed(1)}, ` +
    `nats-server ${nats.toFixed(1)})`
  );
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 80_000);
  const rounds = Number(process.argv[3] ?? 3);
  const secret = randomBytes(16).toString('hex');
  const nats = await NatsServerProcess.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'tributary-replay-floor-measure-'));
  const log = await createEventLog({ natsUrl: nats.url, dataDir, dedupeIndex: false });
  try {
    const messages = createBenchMessages('measure');
    await store(log, messages, 'warmup', WARMUP_MESSAGES);
    await store(log, messages, 'timed', total);
    console.log(`${total} messages stored (and ${WARMUP_MESSAGES} to warm up); ${IN_FLIGHT} in flight`);
    const ratios: Array<{ ratio: number }> = [];
    for (let round = 1; round <= rounds; round += 1) {
      const ceiling = await measureCeiling(messages, total, nats.pid!, secret);
      console.log(`round ${round}: ceiling ${describe(ceiling)}`);
      const floor = await measureFloor(nats.url, nats.pid!, round, total, secret);
      console.log(`round ${round}: floor   ${describe(floor)}`);
      const ratio = floor.messagesPerSecond / ceiling.messagesPerSecond;
      ratios.push({ ratio });
      console.log(`round ${round}: floor/ceiling ${ratio.toFixed(3)}`);
    }
    console.log(
      `replay floor/ceiling, median round: ${medianBy(ratios, (entry) => entry.ratio).ratio.toFixed(3)} ` +
        `(rounds ${ratios.map((entry) => entry.ratio.toFixed(3)).join(', ')})`,
    );
  } finally {
    await log.close();
    await nats.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
