/**
 * BENCH_PHASES=actions: delivery through Segment's Actions Amplitude (the router's adapter in the Actions
 * lane's worker threads, Segment's own destination code, TLS to a loopback fake of api2.amplitude.com)
 * against its ceiling: a plain client (`actions-ceiling.worker.js`, a thread of its own) sending the very
 * requests the destination sent in that round (same method, path, headers and bodies) over the same TLS
 * to the same fake, with the same concurrency. What is left between the two is the destination's code,
 * the lane and the adapter: `ratio actions/ceiling`.
 *
 * Each of BENCH_ROUNDS rounds runs the webhooks adapter (plain HTTP to the fake, for
 * `ratio actions/webhook`, as before), the Actions adapter and then the ceiling, each with one message
 * per `deliver` call as the router makes them and BENCH_ACTIONS_CONCURRENCY calls in flight; each ratio's
 * median round is reported. A round fails the run when a message is not delivered, or reaches the fake
 * in no request or in more than one, or when a ceiling request is not answered 2xx.
 */
import {
  ActionsLane,
  findActionsDestination,
  WebhooksDeliveryAdapter,
  type DeliveryAdapter,
} from '@tributary/destinations';
import type { NormalizedMessage } from '@tributary/contracts';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startFakeVendor, type FakeVendor, type RecordedRequest } from '../support/fake-vendor.kit';
import { medianBy } from './load-loop';
import { watchThreads } from './thread-cpu-profiles';

export interface ActionsRound {
  webhookMessagesPerSecond: number;
  actionsMessagesPerSecond: number;
  /** The same requests from a plain client, counted as the messages they carry. */
  ceilingMessagesPerSecond: number;
  /** Requests the destination sent for the round's messages (what the ceiling sends again). */
  requests: number;
  /**
   * This process's CPU per message over the timed run, in µs: the Actions run (the lane's workers, the
   * adapter, the fake vendor) and the ceiling's (its client thread and the same fake). Steadier than
   * the rates on a busy machine.
   */
  actionsCpuMicrosPerMessage: number;
  ceilingCpuMicrosPerMessage: number;
  ratio: number;
  ceilingRatio: number;
}

export interface ActionsDeliveryResult extends ActionsRound {
  messages: number;
  concurrency: number;
  /** Every round; the figures above are the median round by `ceilingRatio` (`ratio`: by its own median). */
  rounds: ActionsRound[];
}

export async function measureActionsDelivery(
  messages: number,
  concurrency: number,
  rounds: number,
  onRound?: (round: number, figures: ActionsRound) => void,
  /** With BENCH_CPU_PROFILE=1: where each round's Actions run writes the profiles of this process's threads. */
  profileDirectory?: string,
): Promise<ActionsDeliveryResult> {
  // Before the lane starts its workers, so that they are seen.
  const profiler = profileDirectory === undefined ? undefined : watchThreads(profileDirectory);
  const vendor = await startFakeVendor();
  const lane = new ActionsLane({ egressGuard: vendor.egressGuard, ca: vendor.ca, portMap: vendor.portMap });
  const actions = lane.deliveryAdapter(findActionsDestination('actions-amplitude')!);
  const webhooks = new WebhooksDeliveryAdapter({ egressGuard: vendor.egressGuard });
  const actionsSettings = Object.freeze({
    apiKey: 'bench-key',
    secretKey: 'bench-secret',
    endpoint: 'north_america',
  });
  const webhookSettings = Object.freeze({ url: `http://127.0.0.1:${vendor.portMap[80]}/hook` });
  try {
    // Warm-up: loads the destination, opens connections, lets the JIT settle. As long as a round: after
    // 200 messages the first round still cost twice the CPU per message of the next two (975-1,452
    // against 425-1,011 µs, six runs in November 2026), the lane's two workers each compiling Segment's
    // code on its own.
    await run(actions, actionsSettings, messages, concurrency, 'warm');
    await run(webhooks, webhookSettings, Math.min(200, messages), concurrency, 'warm');
    const results: ActionsRound[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const webhookMessagesPerSecond = await run(
        webhooks,
        webhookSettings,
        messages,
        concurrency,
        `webhook-r${round}`,
      );
      const label = `actions-r${round}`;
      const recordedFrom = vendor.requests.length;
      await profiler?.start();
      const cpuBefore = process.cpuUsage();
      const actionsMessagesPerSecond = await run(actions, actionsSettings, messages, concurrency, label);
      const actionsCpu = process.cpuUsage(cpuBefore);
      if (profiler) console.log(`CPU profiles: ${(await profiler.stop(`actions-r${round}`)).join(', ')}`);
      const sent = vendor.requests.slice(recordedFrom);
      assertEachMessageSentOnce(sent, label, messages);
      const ceiling = await replayRequests(vendor, sent, concurrency);
      const ceilingMessagesPerSecond = messages / ceiling.seconds;
      const figures: ActionsRound = {
        webhookMessagesPerSecond: Math.round(webhookMessagesPerSecond),
        actionsMessagesPerSecond: Math.round(actionsMessagesPerSecond),
        ceilingMessagesPerSecond: Math.round(ceilingMessagesPerSecond),
        requests: sent.length,
        actionsCpuMicrosPerMessage: Math.round((actionsCpu.user + actionsCpu.system) / messages),
        ceilingCpuMicrosPerMessage: Math.round(ceiling.cpuMicros / messages),
        ratio: Math.round((actionsMessagesPerSecond / webhookMessagesPerSecond) * 1000) / 1000,
        ceilingRatio: Math.round((actionsMessagesPerSecond / ceilingMessagesPerSecond) * 1000) / 1000,
      };
      onRound?.(round, figures);
      results.push(figures);
      // The fake keeps every request it answered; the next round needs only its own.
      vendor.requests.length = 0;
    }
    const median = medianBy(results, (entry) => entry.ceilingRatio);
    return {
      messages,
      concurrency,
      ...median,
      ratio: medianBy(results, (entry) => entry.ratio).ratio,
      rounds: results,
    };
  } finally {
    await lane.close();
    await webhooks.close();
    await vendor.close();
  }
}

/**
 * Every message of a run (messageIds and userIds `<label>-<index>`) reached the fake in exactly one
 * request: none lost, none sent twice (a body may name its message more than once, in several fields).
 */
function assertEachMessageSentOnce(sent: readonly RecordedRequest[], label: string, messages: number): void {
  const pattern = new RegExp(`${label}-(\\d+)(?!\\d)`, 'g');
  const requestsOf = new Array<number>(messages).fill(0);
  for (const request of sent) {
    const named = new Set<number>();
    for (const match of request.body.matchAll(pattern)) named.add(Number(match[1]));
    for (const index of named) if (index < messages) requestsOf[index] += 1;
  }
  const lost = requestsOf.filter((count) => count === 0).length;
  const duplicated = requestsOf.filter((count) => count > 1).length;
  if (lost > 0 || duplicated > 0) {
    throw new Error(
      `${label}: of ${messages} messages, ${lost} reached the fake vendor in no request and ${duplicated} in more than one`,
    );
  }
}

/**
 * Sends `sent` again from a plain client in a thread of its own; resolves to the seconds its timed part
 * took and this process's CPU time over that part, in µs.
 */
async function replayRequests(
  vendor: FakeVendor,
  sent: readonly RecordedRequest[],
  concurrency: number,
): Promise<{ seconds: number; cpuMicros: number }> {
  const recordedFrom = vendor.requests.length;
  let cpuBefore: NodeJS.CpuUsage | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  interface CeilingOutcome {
    timing?: boolean;
    requests?: number;
    warmUpRequests?: number;
    elapsedMs?: number;
    error?: string;
  }
  const outcome = await new Promise<CeilingOutcome>((resolve, reject) => {
    const worker = new Worker(join(__dirname, 'actions-ceiling.worker.js'), {
      workerData: { port: vendor.portMap[443], ca: vendor.ca, requests: sent, concurrency },
    });
    worker.on('message', (message: CeilingOutcome) => {
      // The client says when its timed part starts (after its start-up and warm-up requests).
      if (message.timing) {
        cpuBefore = process.cpuUsage();
        return;
      }
      if (cpuBefore) cpu = process.cpuUsage(cpuBefore);
      resolve(message);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  if (outcome.error) throw new Error(`the Actions ceiling's client failed: ${outcome.error}`);
  const received = vendor.requests.length - recordedFrom;
  const expected = sent.length + outcome.warmUpRequests!;
  if (received !== expected)
    throw new Error(`the Actions ceiling sent ${expected} requests and the fake vendor got ${received}`);
  return { seconds: outcome.elapsedMs! / 1000, cpuMicros: cpu ? cpu.user + cpu.system : NaN };
}

async function run(
  adapter: DeliveryAdapter,
  settings: Readonly<Record<string, unknown>>,
  count: number,
  concurrency: number,
  label: string,
): Promise<number> {
  let next = 0;
  let failed = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const [result] = await adapter.deliver({ settings, messages: [message(`${label}-${index}`)] });
      if (result?.outcome !== 'delivered') failed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (failed > 0) throw new Error(`${label}: ${failed} of ${count} deliveries failed`);
  return count / seconds;
}

function message(id: string): NormalizedMessage {
  return {
    type: 'track',
    event: 'Song Played',
    // The destination's request names no messageId; the userId carries it, to count each message's requests.
    userId: id,
    anonymousId: 'anon-bench',
    messageId: id,
    properties: { genre: 'jazz', plays: 3 },
    context: { library: { name: 'analytics-node', version: '3.1.0' }, ip: '203.0.113.9' },
    timestamp: '2026-03-01T12:00:00.000Z',
    receivedAt: '2026-03-01T12:00:01.000Z',
  } as unknown as NormalizedMessage;
}

export function printActionsTable(result: ActionsDeliveryResult, goalRatio: number): void {
  console.log(
    [
      '',
      `| delivery (${result.messages} messages, ${result.concurrency} in flight, median round) | messages/s |`,
      '|---|---|',
      `| webhooks adapter, HTTP to a loopback receiver | ${result.webhookMessagesPerSecond} |`,
      `| Actions Amplitude, TLS to a loopback fake | ${result.actionsMessagesPerSecond} |`,
      `| ceiling: its ${result.requests} requests from a plain client, same TLS, same fake | ${result.ceilingMessagesPerSecond} |`,
      '',
      `CPU of this process per message, µs, by round: Actions ${result.rounds.map((entry) => entry.actionsCpuMicrosPerMessage).join(', ')}; ` +
        `ceiling ${result.rounds.map((entry) => entry.ceilingCpuMicrosPerMessage).join(', ')}`,
      `actions/ceiling ratios by round: ${result.rounds.map((entry) => entry.ceilingRatio.toFixed(3)).join(', ')}; ` +
        `actions/webhook: ${result.rounds.map((entry) => entry.ratio.toFixed(3)).join(', ')}`,
      `ratio actions/ceiling: ${result.ceilingRatio.toFixed(3)}  ` +
        `(goal: >= ${goalRatio}: ${result.ceilingRatio >= goalRatio ? 'MET' : 'NOT MET'})`,
      `ratio actions/webhook: ${result.ratio.toFixed(3)}`,
      '',
    ].join('\n'),
  );
}
