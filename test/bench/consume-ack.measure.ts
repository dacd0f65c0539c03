/**
 * A replay's consume-and-ack loop measured alone, apart from the router, its destinations and the
 * bench's load: the JetStream tracking log, a nats-server of its own, the bench's messages as stored,
 * and a consumer per round that reads them all from the start and acks each: with confirmation, as a
 * replay does (128 in flight), or `plain`, as a destination's consumer does (64). Prints each round's messages/s and the CPU per
 * message of this process and of nats-server (from `/proc`, Linux only): what a change to deliveries
 * or acks costs on both sides, without the noise of the full bench (BENCHMARKS.md).
 *
 *   node --require ./test/support/swc-register.js test/bench/consume-ack.measure.ts [messages] [rounds] [plain|confirmed] [holdMs]
 *
 * `messages`: stored once, read by every round (default 100000); `rounds` (default 3; the first
 * warms the code paths up); `plain`: acks without confirmation; `holdMs` (default 0): how long each
 * message is held before its ack, as a destination's answer takes, which sets the rate (in flight ÷
 * hold): nats-server's CPU per message grows as the rate falls.
 */
import { MEASURE_SOURCE, withStoredMessages } from './stored-messages.measure-setup';
import { processCpuTimeMs } from './tributary-server.process';

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 100_000);
  const rounds = Number(process.argv[3] ?? 3);
  const confirmAcks = process.argv[4] !== 'plain';
  const holdMs = Number(process.argv[5] ?? 0);
  const inFlight = confirmAcks ? 128 : 64;
  await withStoredMessages(total, async ({ nats, log }) => {
    console.log(
      `${total} messages stored; each round reads and acks them all, ${inFlight} in flight, acks ${confirmAcks ? 'confirmed' : 'plain'}`,
    );
    for (let round = 1; round <= rounds; round += 1) {
      let acked = 0;
      let finished!: () => void;
      const allAcked = new Promise<void>((resolve) => (finished = resolve));
      const cpuBefore = process.cpuUsage();
      const natsBefore = processCpuTimeMs(nats.pid!);
      const startedAt = process.hrtime.bigint();
      const subscription = await log.consume(
        `measure-${round}`,
        {
          sourceId: MEASURE_SOURCE,
          deliverFrom: new Date(0),
          ackWaitMs: 30_000,
          maxInFlight: inFlight,
          confirmAcks,
        },
        async (delivery) => {
          if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
          await delivery.ack();
          acked += 1;
          if (acked === total) finished();
        },
      );
      await allAcked;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const cpu = process.cpuUsage(cpuBefore);
      const natsMs = processCpuTimeMs(nats.pid!)! - natsBefore!;
      await subscription.stop();
      // Plain acks are not answered: the server may still be recording the last ones.
      let lag = await log.consumerLag(`measure-${round}`);
      for (let wait = 0; wait < 100 && lag.unacknowledged > 0; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lag = await log.consumerLag(`measure-${round}`);
      }
      if (lag.undelivered !== 0 || lag.unacknowledged !== 0)
        throw new Error(`round ${round} left ${JSON.stringify(lag)}`);
      console.log(
        `round ${round}: ${Math.round(total / seconds)} messages/s; CPU µs per message: this process ` +
          `${((cpu.user + cpu.system) / total).toFixed(1)}, nats-server ${((natsMs * 1000) / total).toFixed(1)}`,
      );
    }
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
