/**
 * Latency a user feels: a steady load at half of the delivery rate the run measured (so the router
 * keeps up and no backlog builds, unlike phase 3, whose latencies are mostly backlog), and for every
 * message the time from the tracking API's answer (the moment a client knows its message is stored)
 * to its arrival at the webhook.
 *
 * The load is open: batches leave on a fixed schedule whatever the answers take, as independent
 * clients send them, `rate / 100` messages every 10 ms (at most BENCH_BATCH_SIZE), so a slow answer does
 * not slow the load down and hide itself.
 */
import { BatchPoster } from './batch-poster';
import { createBenchMessages } from './bench-messages';
import type { ConfigApiClient } from '../support/config-api.client';
import { createSource, createWebhookDestination } from './bench-resources';
import { round, summarizeLatencies, type PhaseResult } from './load-loop';
import { BenchWebhookReceiver, receiverFailures } from './webhook-receiver';

/** How long the first message may take to arrive: the router starts the new destination's consumer. */
const PROBE_TIMEOUT_MS = 15_000;
const TICK_MS = 10;
/** Goal of the steady phase's p99, answer to arrival. */
export const STEADY_GOAL_P99_MS = 250;

export interface SteadyLatencyResult {
  /** Messages per second the schedule offered: half of the delivery rate. */
  targetMessagesPerSecond: number;
  /** Messages per second `/v1/batch` stored over the load. */
  offeredMessagesPerSecond: number;
  messagesPerRequest: number;
  seconds: number;
  acceptedMessages: number;
  deliveredMessages: number;
  failedRequests: number;
  /** Arrival at the webhook minus the `/v1/batch` answer, per message (0 when it arrived first). */
  latencyMs: PhaseResult['latencyMs'];
  /** Messages that arrived before their batch's answer reached the client (counted as 0 ms). */
  arrivedBeforeAnswer: number;
  /**
   * Where the tail is: p99.9, when the slowest message was answered and when the messages over the goal
   * were (seconds into the load). A narrow span is one stall; a wide one is a backlog the router was
   * slow to drain.
   */
  tail: {
    p999Ms: number;
    worstAtSeconds: number | null;
    overGoal: number;
    overGoalFromSeconds: number | null;
    overGoalToSeconds: number | null;
    /**
     * Around the slowest message (1 s each side), per 100 ms of the load: the messages answered and the
     * messages that arrived, which tells a stall (arrivals stop while answers go on) from a slow drain.
     */
    around: { fromSeconds: number; answered: number[]; arrived: number[] } | null;
  };
  goal: { p99AtMostMs: number; met: boolean };
  /** Messages lost, duplicated or wrongly signed, or requests that failed; the run fails on any. */
  failures: string[];
}

export async function measureSteadyLatency(options: {
  api: ConfigApiClient;
  workspace: string;
  baseUrl: string;
  sharedSecret: string;
  messagesPerSecond: number;
  seconds: number;
  settings: { concurrency: number; batchSize: number; drainTimeoutSeconds: number };
}): Promise<SteadyLatencyResult> {
  const { api, workspace, settings } = options;
  const source = 'steady';
  const writeKey = await createSource(api, workspace, source);
  const messages = createBenchMessages(writeKey);
  const poster = new BatchPoster(options.baseUrl, writeKey, settings.concurrency);
  const receiver = await BenchWebhookReceiver.start(source, options.sharedSecret);
  try {
    await createWebhookDestination(api, workspace, source, 'webhooks', {
      url: receiver.url,
      sharedSecret: options.sharedSecret,
      enabled: true,
    });
    await poster.send(messages.batchBody(1), 1);
    await waitFor(() => receiver.snapshot().distinctMessages >= 1, PROBE_TIMEOUT_MS);
    if (receiver.snapshot().distinctMessages < 1)
      throw new Error(`steady load: the probe message did not arrive within ${PROBE_TIMEOUT_MS / 1000} s`);
    receiver.reset();
    receiver.keepArrivals();

    const perTick = (options.messagesPerSecond * TICK_MS) / 1000;
    const messagesPerRequest = Math.max(1, Math.min(settings.batchSize, Math.round(perTick)));
    const intervalMs = (messagesPerRequest / options.messagesPerSecond) * 1000;
    const answered: Array<{ messageIds: string[]; answeredAt: number }> = [];
    const failureReasons: string[] = [];
    let failedRequests = 0;
    let acceptedMessages = 0;
    const inFlight = new Set<Promise<void>>();
    const startedAt = performance.now();
    const stopAt = startedAt + options.seconds * 1000;
    for (let tick = 0; ; tick += 1) {
      const dueAt = startedAt + tick * intervalMs;
      if (dueAt >= stopAt) break;
      const wait = dueAt - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const { body, messageIds } = messages.batch(messagesPerRequest);
      const request = poster.send(body, messagesPerRequest).then(
        (stored) => {
          const answeredAt = performance.now();
          if (stored < messageIds.length) {
            failureReasons.push(`${messageIds.length - stored} messages of a batch were rejected`);
            return;
          }
          acceptedMessages += stored;
          answered.push({ messageIds, answeredAt });
        },
        (error: unknown) => {
          failedRequests += 1;
          failureReasons.push(String(error instanceof Error ? error.message : error).slice(0, 200));
        },
      );
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
    await Promise.all(inFlight);
    const loadSeconds = (performance.now() - startedAt) / 1000;

    await waitFor(
      () => receiver.snapshot().distinctMessages >= acceptedMessages,
      settings.drainTimeoutSeconds * 1000,
    );
    const counts = receiver.snapshot();
    const latencies: number[] = [];
    let arrivedBeforeAnswer = 0;
    let worst = { latency: -1, at: NaN };
    const overGoal = { count: 0, from: Infinity, to: -Infinity };
    for (const { messageIds, answeredAt } of answered) {
      const at = (answeredAt - startedAt) / 1000;
      for (const messageId of messageIds) {
        const arrivedAt = receiver.arrivalOf(messageId);
        if (arrivedAt === undefined) continue;
        if (arrivedAt < answeredAt) arrivedBeforeAnswer += 1;
        const latency = Math.max(0, arrivedAt - answeredAt);
        latencies.push(latency);
        if (latency > worst.latency) worst = { latency, at };
        if (latency > STEADY_GOAL_P99_MS) {
          overGoal.count += 1;
          overGoal.from = Math.min(overGoal.from, at);
          overGoal.to = Math.max(overGoal.to, at);
        }
      }
    }
    const latencyMs = summarizeLatencies(latencies);
    let around: SteadyLatencyResult['tail']['around'] = null;
    if (worst.latency >= 0) {
      const from = Math.max(0, Math.floor(worst.at * 10) - 10);
      const buckets = 20 + Math.ceil(worst.latency / 100);
      const answeredPer = new Array<number>(buckets).fill(0);
      const arrivedPer = new Array<number>(buckets).fill(0);
      const bucketOf = (at: number) => Math.floor((at - startedAt) / 100) - from;
      for (const { messageIds, answeredAt } of answered) {
        const answeredBucket = bucketOf(answeredAt);
        for (const messageId of messageIds) {
          if (answeredBucket >= 0 && answeredBucket < buckets) answeredPer[answeredBucket] += 1;
          const arrivedAt = receiver.arrivalOf(messageId);
          const arrivedBucket = arrivedAt === undefined ? -1 : bucketOf(arrivedAt);
          if (arrivedBucket >= 0 && arrivedBucket < buckets) arrivedPer[arrivedBucket] += 1;
        }
      }
      around = { fromSeconds: from / 10, answered: answeredPer, arrived: arrivedPer };
    }
    const sorted = Float64Array.from(latencies).sort();
    return {
      targetMessagesPerSecond: Math.round(options.messagesPerSecond),
      offeredMessagesPerSecond: Math.round(acceptedMessages / loadSeconds),
      messagesPerRequest,
      seconds: round(loadSeconds, 3),
      acceptedMessages,
      deliveredMessages: counts.distinctMessages,
      failedRequests,
      latencyMs,
      arrivedBeforeAnswer,
      tail: {
        p999Ms: sorted.length === 0 ? NaN : round(sorted[Math.ceil(0.999 * sorted.length) - 1]!, 2),
        worstAtSeconds: worst.latency < 0 ? null : round(worst.at, 2),
        overGoal: overGoal.count,
        overGoalFromSeconds: overGoal.count === 0 ? null : round(overGoal.from, 2),
        overGoalToSeconds: overGoal.count === 0 ? null : round(overGoal.to, 2),
        around,
      },
      goal: { p99AtMostMs: STEADY_GOAL_P99_MS, met: latencyMs.p99 <= STEADY_GOAL_P99_MS },
      failures: [
        ...(failureReasons.length > 0
          ? [
              `steady load: ${failureReasons.length} requests failed or were partly rejected (${failureReasons[0]})`,
            ]
          : []),
        ...receiverFailures('steady load', counts, acceptedMessages),
      ],
    };
  } finally {
    poster.close();
    await receiver.close();
  }
}

export function printSteadyLatency(result: SteadyLatencyResult): void {
  console.log(
    `steady load: ${result.acceptedMessages.toLocaleString('en-US')} messages in ${result.seconds} s ` +
      `(${result.offeredMessagesPerSecond.toLocaleString('en-US')} messages/s stored, target ` +
      `${result.targetMessagesPerSecond.toLocaleString('en-US')} = half of the delivery rate, ` +
      `${result.messagesPerRequest} per request), ${result.deliveredMessages.toLocaleString('en-US')} delivered; ` +
      `answer to arrival max ${result.latencyMs.max} ms, ${result.arrivedBeforeAnswer} arrived before their answer`,
  );
  const { tail } = result;
  console.log(
    `steady tail: p99.9 ${tail.p999Ms} ms, max ${result.latencyMs.max} ms answered at ${tail.worstAtSeconds} s ` +
      `into the load; ${tail.overGoal} messages over ${STEADY_GOAL_P99_MS} ms` +
      (tail.overGoal > 0
        ? `, answered from ${tail.overGoalFromSeconds} s to ${tail.overGoalToSeconds} s`
        : ''),
  );
  if (tail.around && tail.overGoal > 0)
    console.log(
      `steady tail, per 100 ms from ${tail.around.fromSeconds} s: answered ${tail.around.answered.join(' ')}; ` +
        `arrived ${tail.around.arrived.join(' ')}`,
    );
  console.log(
    `steady latency ms: p50 ${result.latencyMs.p50} p99 ${result.latencyMs.p99}  ` +
      `(goal: p99 <= ${STEADY_GOAL_P99_MS} ms: ${result.goal.met ? 'MET' : 'NOT MET'})`,
  );
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
