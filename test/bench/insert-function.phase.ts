/**
 * BENCH_PHASES=functions: what an insert function costs a delivery. Two sources of the bench workspace
 * get the same load, each with one webhook destination; one of the two destinations has a trivial
 * insert function in front (`return event`), so every message goes through the function runner's
 * worker process before the webhook. After an unmeasured run of each (BENCH_WARMUP_SECONDS), the two
 * alternate for BENCH_ROUNDS rounds; each round's figure is the delivery rate with the function over
 * the rate without, and the median round is reported as `ratio function/webhook` (goal ≥ 0.8). A
 * message lost or delivered twice fails the run.
 */
import { destinationName } from '@tributary/contracts';
import type { ConfigApiClient } from '../support/config-api.client';
import { BatchPoster } from './batch-poster';
import { createSource, createWebhookDestination } from './bench-resources';
import { createBenchMessages } from './bench-messages';
import { round, runClosedLoop } from './load-loop';
import { arrivalSpanSeconds, BenchWebhookReceiver } from './webhook-receiver';

export const INSERT_FUNCTION_GOAL_RATIO = 0.8;

const PASS_THROUGH =
  'async function onTrack(event) { return event; }\n' +
  'async function onIdentify(event) { return event; }\n' +
  'async function onPage(event) { return event; }\n' +
  'async function onScreen(event) { return event; }\n' +
  'async function onGroup(event) { return event; }\n' +
  'async function onAlias(event) { return event; }\n';

export interface InsertFunctionRun {
  acceptedMessages: number;
  deliveredMessages: number;
  /** Requests beyond one per message: a message delivered twice. */
  duplicates: number;
  signatureMismatches: number;
  messagesPerSecond: number;
  /** The server's CPU time (ingest and delivery) per message delivered, in µs; null off Linux. */
  serverCpuMicrosPerMessage: number | null;
}

export interface InsertFunctionResult {
  rounds: Array<{ webhook: InsertFunctionRun; withFunction: InsertFunctionRun; ratio: number }>;
  /** The median round's ratio, with the function over without. */
  ratio: number;
  goal: { ratioAtLeast: number; met: boolean };
  /** What went wrong (lost or duplicated messages, bad signatures); empty when nothing did. */
  failures: string[];
}

interface Variant {
  label: 'webhook' | 'function';
  writeKey: string;
  receiver: BenchWebhookReceiver;
}

export async function measureInsertFunction(options: {
  api: ConfigApiClient;
  workspace: string;
  sharedSecret: string;
  /** Under BENCH_CPU_PROFILE=1: the server, to profile each round's run of each variant. */
  profiler?: { startCpuProfile(): void; stopCpuProfile(label: string): Promise<string> };
  /** The server, for its CPU time per message. */
  server?: { cpuTimeMs(): number | null };
  settings: {
    seconds: number;
    /** An unmeasured run of each variant first, this long. */
    warmupSeconds: number;
    rounds: number;
    concurrency: number;
    batchSize: number;
    drainTimeoutSeconds: number;
  };
}): Promise<InsertFunctionResult> {
  const { api, workspace, sharedSecret, settings } = options;
  const baseUrl = api.instance.baseUrl;
  const created = await api.ok('POST', `workspaces/${workspace}/functions?type=INSERT_DESTINATION`, {
    function: { display_name: 'Bench pass-through', code: PASS_THROUGH, settings: [] },
  });
  const variants: Variant[] = [];
  for (const label of ['webhook', 'function'] as const) {
    const sourceSlug = `insert-${label}`;
    const writeKey = await createSource(api, workspace, sourceSlug);
    const receiver = await BenchWebhookReceiver.start(sourceSlug, sharedSecret);
    await createWebhookDestination(api, workspace, sourceSlug, 'webhooks', {
      url: receiver.url,
      sharedSecret,
      enabled: true,
    });
    const destination = destinationName({
      workspaceSlug: workspace,
      sourceSlug,
      destinationSlug: 'webhooks',
    });
    if (label === 'function') {
      await api.ok('POST', `${destination}/insert-functions`, {
        insert_function: { function_id: created.id, enabled: true, config: [] },
      });
    }
    variants.push({ label, writeKey, receiver });
  }

  const rounds: InsertFunctionResult['rounds'] = [];
  const failures: string[] = [];
  try {
    // Unmeasured: so that neither variant's first run is the server's first run of its paths.
    if (settings.warmupSeconds > 0) {
      for (const variant of variants) {
        await runOne(variant, baseUrl, { ...settings, seconds: settings.warmupSeconds }, undefined);
      }
    }
    for (let index = 0; index < settings.rounds; index += 1) {
      // Alternating which goes first, so neither always runs on the warmer (or the busier) machine.
      const order = index % 2 === 0 ? variants : [...variants].reverse();
      const runs = new Map<Variant['label'], InsertFunctionRun>();
      for (const variant of order) {
        // Both variants, so the profiler's cost falls on each and the two can be compared per message.
        options.profiler?.startCpuProfile();
        const run = await runOne(variant, baseUrl, settings, options.server);
        runs.set(variant.label, run);
        if (options.profiler) {
          const file = await options.profiler.stopCpuProfile(`functions-${variant.label}-${index + 1}`);
          console.log(
            `server CPU profile (functions, ${variant.label}, ${run.deliveredMessages} messages): ${file}`,
          );
        }
      }
      const webhook = runs.get('webhook')!;
      const withFunction = runs.get('function')!;
      rounds.push({
        webhook,
        withFunction,
        ratio:
          webhook.messagesPerSecond > 0
            ? round(withFunction.messagesPerSecond / webhook.messagesPerSecond, 3)
            : 0,
      });
      for (const [label, run] of runs) {
        if (run.deliveredMessages < run.acceptedMessages)
          failures.push(
            `${label} round ${index + 1}: ${run.acceptedMessages - run.deliveredMessages} messages were not delivered within ${settings.drainTimeoutSeconds} s`,
          );
        if (run.duplicates > 0)
          failures.push(`${label} round ${index + 1}: ${run.duplicates} messages were delivered twice`);
        if (run.signatureMismatches > 0)
          failures.push(`${label} round ${index + 1}: deliveries carried a wrong X-Signature`);
      }
    }
  } finally {
    for (const variant of variants) await variant.receiver.close();
  }
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)]!;
  return {
    rounds,
    ratio: median.ratio,
    goal: { ratioAtLeast: INSERT_FUNCTION_GOAL_RATIO, met: median.ratio >= INSERT_FUNCTION_GOAL_RATIO },
    failures,
  };
}

async function runOne(
  variant: Variant,
  baseUrl: string,
  settings: { seconds: number; concurrency: number; batchSize: number; drainTimeoutSeconds: number },
  server: { cpuTimeMs(): number | null } | undefined,
): Promise<InsertFunctionRun> {
  const { receiver } = variant;
  const messages = createBenchMessages(variant.writeKey);
  const poster = new BatchPoster(baseUrl, variant.writeKey, settings.concurrency);
  try {
    // The probe: the consumer (and the function's isolate) is running before the clock does.
    await poster.send(messages.batchBody(1), 1);
    await waitFor(() => receiver.snapshot().distinctMessages >= 1, 15_000);
    receiver.reset();
    const cpuBefore = server?.cpuTimeMs() ?? null;
    const ingest = await runClosedLoop({
      concurrency: settings.concurrency,
      warmupSeconds: 0,
      seconds: settings.seconds,
      send: () => poster.send(messages.batchBody(settings.batchSize), settings.batchSize),
    });
    await waitFor(
      () => receiver.snapshot().distinctMessages >= ingest.acceptedMessages,
      settings.drainTimeoutSeconds * 1000,
    );
    // A moment more, for a duplicate still on its way.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const counts = receiver.snapshot();
    const cpuAfter = server?.cpuTimeMs() ?? null;
    const span = arrivalSpanSeconds(counts);
    return {
      acceptedMessages: ingest.acceptedMessages,
      deliveredMessages: counts.distinctMessages,
      duplicates: counts.requests - counts.distinctMessages,
      signatureMismatches: counts.signatureMismatches,
      messagesPerSecond: span > 0 ? Math.round(counts.distinctMessages / span) : 0,
      serverCpuMicrosPerMessage:
        cpuBefore === null || cpuAfter === null || counts.distinctMessages === 0
          ? null
          : round(((cpuAfter - cpuBefore) * 1000) / counts.distinctMessages, 1),
    };
  } finally {
    await poster.close();
  }
}

export function printInsertFunction(result: InsertFunctionResult): void {
  const median = [...result.rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(result.rounds.length / 2)]!;
  console.log(
    `function/webhook ratios by round: ${result.rounds.map((entry) => entry.ratio.toFixed(3)).join(', ')}; ` +
      `median round: ${median.withFunction.messagesPerSecond.toLocaleString('en-US')} msg/s through a ` +
      `pass-through insert function, ${median.webhook.messagesPerSecond.toLocaleString('en-US')} msg/s without`,
  );
  if (median.withFunction.serverCpuMicrosPerMessage !== null) {
    console.log(
      `server CPU per message (ingest and delivery, median round): ${median.withFunction.serverCpuMicrosPerMessage} µs ` +
        `through the function, ${median.webhook.serverCpuMicrosPerMessage} µs without`,
    );
  }
  console.log(
    `ratio function/webhook: ${result.ratio.toFixed(3)}  ` +
      `(goal: >= ${INSERT_FUNCTION_GOAL_RATIO}: ${result.goal.met ? 'MET' : 'NOT MET'})`,
  );
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
