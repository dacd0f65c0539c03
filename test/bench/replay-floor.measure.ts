/**
 * The replay floor (`replay-floor.phase.ts`) against the delivery ceiling (`delivery-ceiling.phase.ts`),
 * alone, apart from Tributary and the bench's load: a nats-server of its own, the bench's messages
 * stored once, then `rounds` alternating rounds of the ceiling and the floor. Each prints its
 * messages/s and CPU µs per message by process over the timed messages alone (`/proc`, Linux only);
 * the run fails on a message lost, duplicated or wrongly signed. `npm run bench` measures the floor in
 * each delivery round; this is for trying a change to the event log's deliveries or acks quickly.
 *
 *   node --require ./test/support/swc-register.js test/bench/replay-floor.measure.ts [messages] [rounds]
 *
 * `messages`: stored once, read twice per round, once to warm up (default 80,000); `rounds` (default 3).
 */
import { randomBytes } from 'node:crypto';
import { measureDeliveryCeiling } from './delivery-ceiling.phase';
import { medianBy, round } from './load-loop';
import { measureReplayFloor } from './replay-floor.phase';
import { MEASURE_SOURCE, withStoredMessages } from './stored-messages.measure-setup';

const CEILING_WARMUP_REQUESTS = 10_000;
/** The router's default `ROUTER_MAX_IN_FLIGHT`. */
const IN_FLIGHT = 64;

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 80_000);
  const rounds = Number(process.argv[3] ?? 3);
  const sharedSecret = randomBytes(16).toString('hex');
  await withStoredMessages(total, async ({ nats, messages }) => {
    console.log(`${total} messages stored; ${IN_FLIGHT} in flight`);
    const ratios: Array<{ ratio: number }> = [];
    for (let round_ = 1; round_ <= rounds; round_ += 1) {
      const cpu = { before: 0, after: 0 };
      // This thread: the receiver (the client has a thread of its own), as the floor's receiver is read.
      const ownCpuMs = () => {
        const usage = process.threadCpuUsage();
        return (usage.user + usage.system) / 1000;
      };
      const ceiling = await measureDeliveryCeiling({
        messages,
        sharedSecret,
        requests: total,
        warmupRequests: CEILING_WARMUP_REQUESTS,
        concurrency: IN_FLIGHT,
        client: 'undici',
        timed: { started: () => (cpu.before = ownCpuMs()), ended: () => (cpu.after = ownCpuMs()) },
      });
      const floor = await measureReplayFloor({
        natsUrl: nats.url,
        natsPid: nats.pid!,
        name: `floor-${round_}`,
        sourceId: MEASURE_SOURCE,
        messages: total,
        sharedSecret,
      });
      const failures = [...ceiling.failures, ...floor.failures];
      if (failures.length > 0) throw new Error(failures.join('; '));
      const client = ceiling.clientCpuMs ?? 0;
      console.log(
        `round ${round_}: ceiling ${ceiling.messagesPerSecond.toLocaleString('en-US')} messages/s, CPU µs per message ` +
          `${round(((cpu.after - cpu.before + client) * 1000) / total, 1)} (client ${round((client * 1000) / total, 1)}, ` +
          `receiver ${round(((cpu.after - cpu.before) * 1000) / total, 1)})`,
      );
      const floorCpu = floor.cpuUs;
      console.log(
        `round ${round_}: floor ${floor.messagesPerSecond.toLocaleString('en-US')} messages/s, CPU µs per message ` +
          (floorCpu
            ? `${floorCpu.total} (router ${floorCpu.router}, receiver ${floorCpu.receiver}, nats-server ${floorCpu.natsServer})`
            : 'n/a'),
      );
      const ratio = round(floor.messagesPerSecond / ceiling.messagesPerSecond, 3);
      ratios.push({ ratio });
      console.log(`round ${round_}: floor/ceiling ${ratio.toFixed(3)}`);
    }
    console.log(
      `replay floor/ceiling, median round: ${medianBy(ratios, (entry) => entry.ratio).ratio.toFixed(3)} ` +
        `(rounds ${ratios.map((entry) => entry.ratio.toFixed(3)).join(', ')})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
