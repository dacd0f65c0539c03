/**
 * Phases 3 and 4 of `npm run bench`: what happens after ingest. Messages of a second source travel
 * through the log and the router's consumer to a webhook receiver in the bench process (delivery), and
 * the same history is sent again to a second webhook by a replay.
 */
import type { BatchPoster } from './batch-poster';
import type { BenchMessages } from './bench-messages';
import type { ReplayResource } from '@tributary/contracts';
import type { ConfigApiClient } from '../support/config-api.client';
import { createWebhookDestination, replayOf, requestReplay } from './bench-resources';
import { round, runClosedLoop, summarizeLatencies, type PhaseResult } from './load-loop';
import {
  arrivalSpanSeconds,
  receiverFailures,
  type BenchWebhookReceiver,
  type ReceiverCounts,
} from './webhook-receiver';
import { printTable } from './print-table';

/** How long the first message may take to arrive: the router starts the new destination's consumer. */
const PROBE_TIMEOUT_MS = 15_000;
const POLL_RECEIVER_MS = 20;
const POLL_REPLAY_MS = 100;

export interface DeliveryResult {
  /** Messages `/v1/batch` stored during the load (the probe message not included). */
  acceptedMessages: number;
  /** Distinct messages the receiver got. */
  deliveredMessages: number;
  /** Requests the receiver answered (more than `deliveredMessages` if some message came twice). */
  receivedRequests: number;
  /** Every accepted message arrived before the drain timeout. */
  complete: boolean;
  /** The ingest side of this phase: `/v1/batch` while the router delivers. */
  ingest: PhaseResult;
  /** First arrival to last arrival. */
  deliverySpanSeconds: number;
  /** Delivered messages over the delivery span. */
  messagesPerSecond: number;
  ratioToIngest: number;
  /** Delivered by the time the last `/v1/batch` answer came. */
  deliveredDuringLoad: number;
  /** From the last `/v1/batch` answer to the last arrival; null when the drain timed out. */
  drainSeconds: number | null;
  /** Arrival minus the send time carried in each messageId (stamped when its batch was built). */
  endToEndLatencyMs: PhaseResult['latencyMs'];
  signatures: { checked: number; mismatches: number };
  /** Messages lost, duplicated or wrongly signed (`receiverFailures`); the run fails on any. */
  failures: string[];
}

export async function measureDelivery(options: {
  api: ConfigApiClient;
  workspace: string;
  source: string;
  poster: BatchPoster;
  messages: BenchMessages;
  receiver: BenchWebhookReceiver;
  sharedSecret: string;
  settings: { seconds: number; concurrency: number; batchSize: number; drainTimeoutSeconds: number };
  ingestMessagesPerSecond: number;
}): Promise<DeliveryResult> {
  const { api, workspace, source, poster, messages, receiver, settings } = options;
  await createWebhookDestination(api, workspace, source, 'webhooks', {
    url: receiver.url,
    sharedSecret: options.sharedSecret,
    enabled: true,
  });

  // One message first: proves the pipeline (and the signature) works and lets the router start the
  // destination's consumer before the clock runs.
  await poster.send(messages.batchBody(1), 1);
  const probe = await waitForReceiver(receiver, 1, PROBE_TIMEOUT_MS);
  if (probe.distinctMessages < 1) {
    throw new Error(
      `the probe message did not reach the webhook receiver within ${PROBE_TIMEOUT_MS / 1000} s`,
    );
  }
  if (probe.signatureMismatches > 0) throw new Error('the probe message arrived with a wrong X-Signature');
  receiver.reset();

  // No warm-up: every message sent must be delivered, and the server is already warm from phase 2.
  const ingest = await runClosedLoop({
    concurrency: settings.concurrency,
    warmupSeconds: 0,
    seconds: settings.seconds,
    send: () => poster.send(messages.batchBody(settings.batchSize), settings.batchSize),
  });
  const loadStoppedAt = Date.now();
  const deliveredDuringLoad = receiver.snapshot().distinctMessages;

  const counts = await waitForReceiver(
    receiver,
    ingest.acceptedMessages,
    settings.drainTimeoutSeconds * 1000,
  );
  const complete = counts.distinctMessages >= ingest.acceptedMessages;
  const spanSeconds = arrivalSpanSeconds(counts);
  const messagesPerSecond = spanSeconds > 0 ? Math.round(counts.distinctMessages / spanSeconds) : 0;
  return {
    acceptedMessages: ingest.acceptedMessages,
    deliveredMessages: counts.distinctMessages,
    receivedRequests: counts.requests,
    complete,
    ingest,
    deliverySpanSeconds: round(spanSeconds, 3),
    messagesPerSecond,
    ratioToIngest: round(messagesPerSecond / options.ingestMessagesPerSecond, 3),
    deliveredDuringLoad,
    drainSeconds: complete ? round(Math.max(0, counts.lastArrivalAt! - loadStoppedAt) / 1000, 3) : null,
    endToEndLatencyMs: summarizeLatencies(receiver.latenciesMs()),
    signatures: { checked: counts.signaturesChecked, mismatches: counts.signatureMismatches },
    failures: receiverFailures('webhook delivery', counts, ingest.acceptedMessages),
  };
}

export interface ReplayResult {
  /** Messages of the source since the replay's start time: the probe plus phase 3's. */
  expectedMessages: number;
  /** Distinct messages the second receiver got. */
  replayedMessages: number;
  state: string;
  /** The replay's own counts, as the Config API reports them once it is done. */
  counts: Record<string, number> | null;
  /** From the replay request to its last arrival. */
  durationSeconds: number | null;
  /** Replayed messages over `durationSeconds`. */
  messagesPerSecond: number;
  ratioToIngest: number;
  /** From the replay request until the Config API showed it COMPLETED (or FAILED). */
  secondsUntilFinished: number | null;
  signatures: { checked: number; mismatches: number };
  /** Messages lost, duplicated or wrongly signed, or the replay not COMPLETED; the run fails on any. */
  failures: string[];
}

export async function measureReplay(options: {
  api: ConfigApiClient;
  workspace: string;
  source: string;
  receiver: BenchWebhookReceiver;
  sharedSecret: string;
  startTime: Date;
  expectedMessages: number;
  timeoutSeconds: number;
  ingestMessagesPerSecond: number;
}): Promise<ReplayResult> {
  const { api, workspace, source, receiver } = options;
  const slug = 'webhooks-replay';
  // Disabled: only the replay sends to it, so every message it gets is a replayed one.
  await createWebhookDestination(api, workspace, source, slug, {
    url: receiver.url,
    sharedSecret: options.sharedSecret,
    enabled: false,
  });

  const requestedAt = Date.now();
  const deadline = requestedAt + options.timeoutSeconds * 1000;
  const replayId = await requestReplay(api, workspace, source, slug, options.startTime);
  let replay: ReplayResource = await replayOf(api, workspace, source, slug, replayId);
  while (replay.state === 'RUNNING' && Date.now() < deadline) {
    await sleep(POLL_REPLAY_MS);
    replay = await replayOf(api, workspace, source, slug, replayId);
  }
  const finishedAt = replay.state === 'RUNNING' ? null : Date.now();
  // A replay is COMPLETED once every message is acknowledged, so all have arrived by then.
  const counts = receiver.snapshot();
  const durationMs = counts.lastArrivalAt === null ? null : counts.lastArrivalAt - requestedAt;
  const messagesPerSecond = durationMs ? Math.round(counts.distinctMessages / (durationMs / 1000)) : 0;
  return {
    expectedMessages: options.expectedMessages,
    replayedMessages: counts.distinctMessages,
    state: replay.state,
    counts: replay.counts,
    durationSeconds: durationMs === null ? null : round(durationMs / 1000, 3),
    messagesPerSecond,
    ratioToIngest: round(messagesPerSecond / options.ingestMessagesPerSecond, 3),
    secondsUntilFinished: finishedAt === null ? null : round((finishedAt - requestedAt) / 1000, 3),
    signatures: { checked: counts.signaturesChecked, mismatches: counts.signatureMismatches },
    failures: [
      ...(replay.state === 'COMPLETED'
        ? []
        : [`the replay ended ${replay.state} (timeout ${options.timeoutSeconds} s)`]),
      ...receiverFailures('replay', counts, options.expectedMessages),
    ],
  };
}

export function printDeliveryTable(delivery: DeliveryResult, replay: ReplayResult | null): void {
  const rows: string[][] = [
    ['', 'messages', 'delivered', 'messages/s', 'ratio to ingest', 'p50 ms', 'p99 ms', 'max ms', 'drain s'],
    [
      'webhook delivery',
      delivery.acceptedMessages.toLocaleString('en-US'),
      delivery.deliveredMessages.toLocaleString('en-US'),
      delivery.messagesPerSecond.toLocaleString('en-US'),
      delivery.ratioToIngest.toFixed(3),
      String(delivery.endToEndLatencyMs.p50),
      String(delivery.endToEndLatencyMs.p99),
      String(delivery.endToEndLatencyMs.max),
      delivery.drainSeconds === null ? 'timed out' : String(delivery.drainSeconds),
    ],
  ];
  if (replay) {
    rows.push([
      'replay',
      replay.expectedMessages.toLocaleString('en-US'),
      replay.replayedMessages.toLocaleString('en-US'),
      replay.messagesPerSecond.toLocaleString('en-US'),
      replay.ratioToIngest.toFixed(3),
      '',
      '',
      '',
      '',
    ]);
  }
  printTable(rows);
  console.log(
    `delivery: /v1/batch took ${delivery.ingest.messagesPerSecond.toLocaleString('en-US')} messages/s for ` +
      `${delivery.ingest.seconds} s while the router delivered (p99 ${delivery.ingest.latencyMs.p99} ms, ` +
      `${delivery.ingest.failedRequests} failed requests); ` +
      `${delivery.deliveredDuringLoad.toLocaleString('en-US')} delivered by the end of the load; ` +
      `delivery span ${delivery.deliverySpanSeconds} s; ${delivery.receivedRequests.toLocaleString('en-US')} webhook requests; ` +
      `X-Signature sampled ${delivery.signatures.checked}x, ${delivery.signatures.mismatches} wrong` +
      (delivery.complete ? '' : `; NOT ALL DELIVERED: the drain timed out`),
  );
  for (const [reason, count] of Object.entries(delivery.ingest.failures))
    console.log(`delivery-phase ingest failures: ${count} x ${reason}`);
  if (replay) {
    console.log(
      `replay: ${replay.state} after ${replay.secondsUntilFinished ?? 'more than the timeout of'} s ` +
        `(request to last arrival ${replay.durationSeconds ?? 'n/a'} s), counts ${JSON.stringify(replay.counts)}; ` +
        `X-Signature sampled ${replay.signatures.checked}x, ${replay.signatures.mismatches} wrong`,
    );
  }
  console.log(
    'messages/s: delivery = delivered over first to last arrival; replay = replayed over replay request to last arrival. ' +
      'Latency = arrival minus the send time in the messageId. Ratios are to phase 2 ingest.',
  );
}

async function waitForReceiver(
  receiver: BenchWebhookReceiver,
  messages: number,
  timeoutMs: number,
): Promise<ReceiverCounts> {
  const deadline = Date.now() + timeoutMs;
  let counts = receiver.snapshot();
  while (counts.distinctMessages < messages && Date.now() < deadline) {
    await sleep(POLL_RECEIVER_MS);
    counts = receiver.snapshot();
  }
  return counts;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
