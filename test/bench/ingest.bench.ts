/**
 * `npm run bench`: how close `/v1/batch` comes to publishing straight to JetStream, how fast the
 * router then delivers and replays what was ingested, and how long Config API writes and reads take.
 *
 * One run, one nats-server, one Tributary server (its real entry point, in a child process), six phases:
 * 1. ceiling (`jetstream-ceiling.phase.ts`): the stored JSON of every message, with its `Nats-Msg-Id`,
 *    published from this process through the project's own pipelined publisher (the one the tracking
 *    API uses) with the same batch size and concurrency: `ratio tributary/ceiling`. The same through the
 *    client library's `js.publish` per message is kept as a second line, `ratio tributary/stock-client`;
 * 2. tributary: the same messages as analytics-node sends them, POSTed to `/v1/batch` over keep-alive
 *    HTTP connections, with the same batch size, concurrency and duration;
 * 3. delivery: a second source with one enabled webhooks destination pointing at a receiver in this
 *    process (127.0.0.1, answers 200 at once, checks `X-Signature` on a sample). After one probe
 *    message has arrived, the same load loop drives `/v1/batch` for BENCH_DELIVERY_SECONDS, then the
 *    bench waits until every accepted message has arrived: delivered messages/s (first to last
 *    arrival), end-to-end latency (arrival minus the send time in the analytics-node messageId),
 *    backlog drain time after the load, and the ratio to phase 2's ingest rate;
 * 4. replay: a second, disabled webhooks destination on that source (`webhooks-replay`) at a second
 *    receiver, and a replay from before phase 3 until the Config API shows it COMPLETED: replayed
 *    messages/s (replay request to last arrival) and the ratio to phase 2's ingest rate;
 *    phases 3 and 4 run BENCH_ROUNDS times, each round on a source of its own after a delivery ceiling
 *    of its own (a plain client POSTing the same bodies, `delivery-ceiling.phase.ts`), and each ratio's
 *    median round is reported; then a steady load at half of the delivery rate prints the time from
 *    each `/v1/batch` answer to the webhook's arrival (`steady-latency.phase.ts`, BENCH_STEADY_SECONDS, 10);
 * 5. Config API latency (`config-api-latency.phase.ts`): BENCH_CONFIG_OPERATIONS of each write (create,
 *    update and delete of sources and destinations) and each read, one at a time over one keep-alive
 *    connection: p50/p95/p99/max per kind; reads as a ratio to `GET /health/live` of the same server,
 *    writes to that plus a raw append of the same events through the SQLite `EventStore` port.
 * It prints three tables and writes `.bench/results.json` (after each phase, so earlier figures survive
 * a later failure). It exits non-zero when a message is not delivered or replayed in time or carries a
 * wrong signature, when a message is lost or duplicated in any phase (the streams' counts after the
 * ingest phases, the receivers' messageIds, the warehouse tables, the requests the Actions fake got),
 * or when a Config API request does not answer as it should.
 *
 * Settings (environment): BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_ROUNDS (3: phases 1 and 2
 * alternate this many times and the median round by ratio is the result), BENCH_CONCURRENCY (4),
 * BENCH_BATCH_SIZE (100), BENCH_DELIVERY_SECONDS (5), BENCH_DRAIN_TIMEOUT_SECONDS (30),
 * BENCH_REPLAY_TIMEOUT_SECONDS (30), BENCH_CPU_PROFILE=1 writes a CPU profile of the server per
 * phase (ingest, delivery, replay) to `.bench/` (summarize one with
 * `node test/bench/summarize-cpu-profile.js <file>`; with BENCH_HEAP_PROFILE=1 also a sampling heap profile
 * of everything allocated, `node test/bench/summarize-heap-profile.js <file>`), BENCH_SERVER_NODE_OPTIONS (node
 * flags of the server),
 * BENCH_CONFIG_OPERATIONS (200), BENCH_PHASES (all; or a comma-separated list of `ingest` = phases 1-2,
 * `suppression` = phase 2 again against a source suppressing BENCH_SUPPRESSED_USERS (10,000) users
 * (`suppression.phase.ts`), alternating with phase 2 and printed as `ratio suppression/ingest`, which needs `ingest`,
 * `protocols` = phase 2 again against a source connected to a tracking plan (`protocols.phase.ts`),
 * alternating with phase 2 in each round and printed as `ratio protocols/ingest`, which needs `ingest`,
 * `delivery` = phases 3-4 with the steady load, which needs `ingest`, `config` = phase 5, and `actions`: Actions Amplitude
 * delivery against the same requests from a plain client (and webhooks), `actions-delivery.phase.ts`; BENCH_ACTIONS_MESSAGES (2000),
 * BENCH_ACTIONS_CONCURRENCY (16), `functions`: webhook delivery through a pass-through insert function
 * against without, alternating BENCH_ROUNDS rounds, `insert-function.phase.ts`, and `dedupe` = phase 6),
 * `postgres` = the PostgreSQL phase alone (`delivery` runs it too, after its own phases;
 * BENCH_POSTGRES_MESSAGES (40000) messages of backlog, drained by a replay, `postgres.phase.ts`),
 * BENCH_DEDUPE_IDS (2000000), BENCH_DEDUPE_REST_SECONDS (10), BENCH_DEDUPE_GUARD_WINDOW (10s: the server's DEDUPE_GUARD_WINDOW),
 * BENCH_DEDUPE_INDEX (on, the server's default; `off` runs the ingest phases with JetStream's window alone and skips phase 6).
 * 6. dedupe memory (`dedupe-memory.phase.ts`): resident memory of nats-server plus Tributary per
 *    messageId held in the dedupe window, after BENCH_DEDUPE_IDS unique ids.
 */
import { generateAccessTokenSecret } from '@tributary/auth';
import { TRACKING_STREAM } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchPoster } from './batch-poster';
import { createBenchMessages, type BenchMessages } from './bench-messages';
import { ConfigApiClient } from '../support/config-api.client';
import { createSource, createWorkspace } from './bench-resources';
import { measureConfigApiLatency, printConfigApiTable } from './config-api-latency.phase';
import { measureDeliveryCeiling, type DeliveryCeilingResult } from './delivery-ceiling.phase';
import { measureDedupeMemory, printDedupeMemory } from './dedupe-memory.phase';
import {
  measureDelivery,
  measureReplay,
  printDeliveryTable,
  type DeliveryResult,
  type ReplayResult,
} from './delivery-phases';
import { measureSteadyLatency, printSteadyLatency } from './steady-latency.phase';
import { measureFailingDestination } from './failing-destination.phase';
import { measurePostgres } from './postgres.phase';
import { round, runClosedLoop, type PhaseResult } from './load-loop';
import { assertBenchMessagesFitPlan, assertPlanEnforced, createPlannedSource } from './protocols.phase';
import { assertSuppressionInForce, createSuppressingSource } from './suppression.phase';
import { TributaryServerProcess } from './tributary-server.process';
import {
  CEILING_STREAM,
  ensureCeilingStream,
  measureJetStreamCeiling,
  storedCountFailures,
  streamMessageCount,
  type CeilingResult,
} from './jetstream-ceiling.phase';
import { BenchWebhookReceiver } from './webhook-receiver';
import { measureActionsDelivery, printActionsTable } from './actions-delivery.phase';
import { measureInsertFunction, printInsertFunction } from './insert-function.phase';

const GOAL_RATIO = 0.8;
const GOAL_P99_MS = 50;
/** Goal of `ratio delivery/ceiling`, `ratio replay/ceiling` and `ratio postgres/ceiling`. */
const DELIVERY_GOAL_RATIO = 0.8;
/** Goal of `ratio actions/ceiling`. */
const ACTIONS_GOAL_RATIO = 0.5;

const PHASE_GROUPS = [
  'ingest',
  'protocols',
  'suppression',
  'delivery',
  'postgres',
  'config',
  'actions',
  'functions',
  'dedupe',
] as const;
/** Goal of `ratio suppression/ingest`: checking 10,000 suppressed users costs ingest at most 3 %. */
const SUPPRESSION_GOAL_RATIO = 0.97;
/** Goal of `ratio protocols/ingest`: enforcing a realistic plan keeps at least this share of the rate. */
const PROTOCOLS_GOAL_RATIO = 0.8;
type PhaseGroup = (typeof PHASE_GROUPS)[number];

/** BENCH_PHASES: every phase unless a list says which, for a quick run of one part while developing. */
function phasesSetting(): PhaseGroup[] {
  const text = (process.env.BENCH_PHASES ?? '').trim();
  if (text === '' || text === 'all') return [...PHASE_GROUPS];
  const names = text.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(PHASE_GROUPS as readonly string[]).includes(name))
      throw new Error(`BENCH_PHASES: "${name}" is not one of all, ${PHASE_GROUPS.join(', ')}`);
  }
  // Delivery and replay are reported as ratios to the ingest rate of phase 2.
  if (names.includes('delivery') && !names.includes('ingest'))
    throw new Error('BENCH_PHASES: delivery needs ingest (its figures are ratios to the ingest rate)');
  if (names.includes('suppression') && !names.includes('ingest'))
    throw new Error('BENCH_PHASES: suppression needs ingest (its figure is a ratio to the ingest rate)');
  if (names.includes('protocols') && !names.includes('ingest'))
    throw new Error('BENCH_PHASES: protocols needs ingest (its figure is a ratio to the ingest rate)');
  return PHASE_GROUPS.filter((name) => names.includes(name));
}

/** `10s`, `2m`, `500ms` (as DEDUPE_GUARD_WINDOW takes them) in milliseconds. */
function durationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (!match) throw new Error(`BENCH_DEDUPE_GUARD_WINDOW: "${text}" is not a duration such as 10s`);
  return Number(match[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms'];
}

function numberSetting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${text}"`);
  return value;
}

const settings = {
  seconds: numberSetting('BENCH_SECONDS', 10),
  warmupSeconds: numberSetting('BENCH_WARMUP_SECONDS', 2),
  /** Phases 1 and 2 run this many times, alternating; the median round by ratio is reported. */
  rounds: Math.round(numberSetting('BENCH_ROUNDS', 3)),
  concurrency: Math.round(numberSetting('BENCH_CONCURRENCY', 4)),
  batchSize: Math.round(numberSetting('BENCH_BATCH_SIZE', 100)),
  /** How long phase 3 drives `/v1/batch` (its messages must then all be delivered, and replayed in phase 4). */
  deliverySeconds: numberSetting('BENCH_DELIVERY_SECONDS', 5),
  /** The steady load after phase 4: seconds at half of the delivery rate (`steady latency ms`). */
  steadySeconds: numberSetting('BENCH_STEADY_SECONDS', 10),
  /** How long phase 3 waits, after the load, for the last messages to arrive. */
  drainTimeoutSeconds: numberSetting('BENCH_DRAIN_TIMEOUT_SECONDS', 30),
  /** The PostgreSQL phase: messages in the backlog the router drains into the destination. */
  postgresMessages: Math.round(numberSetting('BENCH_POSTGRES_MESSAGES', 40_000)),
  /** How long phase 4 waits for the replay to complete. */
  replayTimeoutSeconds: numberSetting('BENCH_REPLAY_TIMEOUT_SECONDS', 30),
  cpuProfile: process.env.BENCH_CPU_PROFILE === '1',
  /** Node flags for the server only, to try runtime tuning: `--max-semi-space-size=32`. */
  serverNodeOptions: (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean),
  /** Phase 5: requests of each Config API write and read kind. */
  configOperations: Math.round(numberSetting('BENCH_CONFIG_OPERATIONS', 200)),
  phases: phasesSetting(),
  /** Phase 6: unique messageIds sent to measure the dedupe index's memory per id. */
  dedupeIds: Math.round(numberSetting('BENCH_DEDUPE_IDS', 2_000_000)),
  /**
   * Phase 6: seconds of rest over which resident memory is sampled at each end. nats-server's Go heap
   * is collected only when it allocates, or every 2 minutes when idle: 130 s shows its memory after
   * that forced collection, where the default 10 s may still hold the last seconds' garbage.
   */
  dedupeRestSeconds: numberSetting('BENCH_DEDUPE_REST_SECONDS', 10),
  /**
   * DEDUPE_GUARD_WINDOW of the server: JetStream keeps this window's ids in RAM (about 270 B each), so
   * it must be short next to the time phase 6 takes for its figure to show the index's cost per id.
   */
  dedupeGuardWindow: process.env.BENCH_DEDUPE_GUARD_WINDOW?.trim() || '10s',
  /**
   * The server's DEDUPE_INDEX: `on` like the server's default (phase 6 needs it), `off` to compare
   * the ingest phases with JetStream's window alone.
   */
  dedupeIndex: process.env.BENCH_DEDUPE_INDEX === 'off' ? 'off' : 'on',
};

const repositoryRoot = join(__dirname, '..', '..');
const resultsDirectory = join(repositoryRoot, '.bench');
const RESULTS_FILE = 'results.json';
const WORKSPACE = 'bench';

/** Everything to undo, run in reverse order on success, failure and Ctrl-C alike. */
const cleanups: Array<() => Promise<void> | void> = [];

async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (error) {
      console.error('clean-up step failed:', error);
    }
  }
}

async function main(): Promise<void> {
  const nats = await NatsServerProcess.start();
  cleanups.push(() => nats.dispose());
  const dataDirectory = mkdtempSync(join(tmpdir(), 'tributary-bench-'));
  cleanups.push(() => rmSync(dataDirectory, { recursive: true, force: true }));

  const adminToken = generateAccessTokenSecret();
  if (settings.cpuProfile) mkdirSync(resultsDirectory, { recursive: true });
  const server = await TributaryServerProcess.start({
    environment: {
      PORT: '0',
      HOST: '127.0.0.1',
      // The bench does not scrape; a free port keeps it from clashing with a local Tributary on 9464.
      METRICS_PORT: '0',
      DATA_DIR: dataDirectory,
      NATS_URL: nats.url,
      TRIBUTARY_BOOTSTRAP_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      // The bench measures throughput, not the limiter.
      TRACKING_RATE_LIMIT: '0',
      // The dedupe index is on (the server's default) unless BENCH_DEDUPE_INDEX=off; its guard window
      // is the bench's setting.
      DEDUPE_INDEX: settings.dedupeIndex,
      DEDUPE_GUARD_WINDOW: settings.dedupeGuardWindow,
      // Phase 4 polls its replay every 100 ms and phase 5 sends about ten requests per operation, all
      // beyond the default per-token limit meant for clients.
      CONFIG_API_RATE_LIMIT: String(Math.max(100_000, settings.configOperations * 20)),
      ...(settings.cpuProfile && { BENCH_CPU_PROFILE_DIR: resultsDirectory }),
    },
    nodeOptions: [
      ...settings.serverNodeOptions,
      ...(settings.cpuProfile ? ['--require', join(__dirname, 'cpu-profile.preload.js')] : []),
    ],
    ipc: settings.cpuProfile,
  });
  cleanups.push(() => server.stop());
  process.once('exit', () => server.killNow());

  const api = new ConfigApiClient({ baseUrl: server.baseUrl, adminToken });
  await createWorkspace(api, WORKSPACE, 'Bench');

  const results: Record<string, unknown> = {
    finishedAt: new Date().toISOString(),
    settings,
    machine: {
      node: process.version,
      natsServer: natsServerVersion(nats.binary),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
    },
  };
  const writeResults = () => {
    mkdirSync(resultsDirectory, { recursive: true });
    results.finishedAt = new Date().toISOString();
    writeFileSync(join(resultsDirectory, RESULTS_FILE), `${JSON.stringify(results, null, 2)}\n`);
  };
  const failures: string[] = [];
  const runs = (phase: PhaseGroup) => settings.phases.includes(phase);

  // The dedupe phase runs first: nats-server's Go heap, once grown by the ceiling phase's own
  // 24 h duplicate window, breathes by more than the index costs, which would drown the figure.
  if (!runs('dedupe')) {
    console.log('phase 6/6 (dedupe memory): not in BENCH_PHASES');
  } else if (settings.dedupeIndex !== 'on') {
    console.log(
      'phase 6/6 (dedupe memory): skipped with BENCH_DEDUPE_INDEX=off, it measures the dedupe index',
    );
  } else {
    console.log(`phase 6/6 (run first): dedupe memory (${settings.dedupeIds} unique messageIds) ...`);
    const writeKey = await createSource(api, WORKSPACE, 'dedupe');
    const dedupe = await measureDedupeMemory({
      baseUrl: server.baseUrl,
      writeKey,
      messages: createBenchMessages(writeKey),
      pids: { nats: nats.pid, tributary: server.pid },
      ids: settings.dedupeIds,
      concurrency: settings.concurrency,
      batchSize: settings.batchSize,
      guardWindowMs: durationMs(settings.dedupeGuardWindow),
      guardWindowText: settings.dedupeGuardWindow,
      dataDirectory,
      restSeconds: settings.dedupeRestSeconds,
    });
    printDedupeMemory(dedupe);
    results.dedupe = dedupe;
    writeResults();
  }

  let tributary: TributaryResult | null = null;
  if (!runs('ingest')) {
    console.log('phases 1-2/5 (ingest): not in BENCH_PHASES');
  } else {
    const writeKey = await createSource(api, WORKSPACE, 'backend');
    const messages = createBenchMessages(writeKey);
    console.log(
      `ingest bench: ${settings.seconds} s per phase after ${settings.warmupSeconds} s warm-up, ` +
        `${settings.concurrency} concurrent clients, ${settings.batchSize}-message batches, ` +
        `messages ${messages.sentBytes.min}-${messages.sentBytes.max} B as sent (average ${messages.sentBytes.average} B), ` +
        `${messages.storedBytes.min}-${messages.storedBytes.max} B as stored (average ${messages.storedBytes.average} B)`,
    );

    // Phases 1 and 2 alternate for BENCH_ROUNDS rounds and the median round (by ratio) is the result: on
    // a shared machine, load that comes and goes then falls on both sides of the ratio alike.
    const rounds: IngestRound[] = [];
    const protocolsRounds: Array<{ protocols: TributaryResult; ingest: TributaryResult; ratio: number }> = [];
    let protocolsWriteKey: string | null = null;
    let protocolsMessages: BenchMessages | null = null;
    if (runs('protocols')) {
      protocolsWriteKey = await createPlannedSource(api, WORKSPACE, 'planned');
      protocolsMessages = createBenchMessages(protocolsWriteKey);
      assertBenchMessagesFitPlan(protocolsMessages.storedMessages);
    }
    const suppressionRounds: Array<{ suppression: TributaryResult; ingest: TributaryResult; ratio: number }> =
      [];
    let suppressionWriteKey: string | null = null;
    let suppressionMessages: BenchMessages | null = null;
    const suppressedUsers = Number(process.env.BENCH_SUPPRESSED_USERS ?? 10_000);
    if (runs('suppression')) {
      suppressionWriteKey = await createSuppressingSource(
        api,
        `${WORKSPACE}-suppressing`,
        'suppressing',
        suppressedUsers,
      );
      await assertSuppressionInForce(server.baseUrl, suppressionWriteKey);
      suppressionMessages = createBenchMessages(suppressionWriteKey);
    }
    await ensureCeilingStream(nats.url);
    const ceilingStreamBefore = await streamMessageCount(nats.url, CEILING_STREAM);
    const trackingStreamBefore = await streamMessageCount(nats.url, TRACKING_STREAM);
    const tributaryRuns: TributaryResult[] = [];
    const ceilingRuns: CeilingResult[] = [];
    for (let round_ = 1; round_ <= settings.rounds; round_ += 1) {
      console.log(
        `round ${round_}/${settings.rounds}, phase 1/5: JetStream ceiling (the pipelined publisher, from the bench) ...`,
      );
      const ceilingOfRound = await measureJetStreamCeiling('pipelined', nats.url, messages, settings);
      ceilingRuns.push(ceilingOfRound);
      console.log(`round ${round_}/${settings.rounds}, phase 2/5: tributary /v1/batch ...`);
      if (settings.cpuProfile) server.startCpuProfile();
      // The suppression phase runs before phase 2 in even rounds and after it in odd ones, so that
      // whatever a phase leaves behind (a longer log, garbage) does not always fall on the same side.
      const suppressionFirst =
        suppressionWriteKey && suppressionMessages && round_ % 2 === 0
          ? await measureTributary(server, suppressionWriteKey, suppressionMessages)
          : undefined;
      const tributaryOfRound = await measureTributary(server, writeKey, messages);
      tributaryRuns.push(tributaryOfRound);
      if (suppressionFirst) tributaryRuns.push(suppressionFirst);
      if (settings.cpuProfile)
        console.log(`server CPU profile (ingest): ${await server.stopCpuProfile(`ingest-${round_}`)}`);
      console.log(
        `round ${round_}/${settings.rounds}, phase 1b/5: JetStream stock client (js.publish per message) ...`,
      );
      const stockClientOfRound = await measureJetStreamCeiling('stock-client', nats.url, messages, settings);
      ceilingRuns.push(stockClientOfRound);
      const ratioOfRound = round(tributaryOfRound.messagesPerSecond / ceilingOfRound.messagesPerSecond, 3);
      const stockClientRatioOfRound = round(
        tributaryOfRound.messagesPerSecond / stockClientOfRound.messagesPerSecond,
        3,
      );
      console.log(
        `round ${round_}/${settings.rounds}: ratio ${ratioOfRound.toFixed(3)}, to the stock client ${stockClientRatioOfRound.toFixed(3)}`,
      );
      rounds.push({
        ceiling: ceilingOfRound,
        stockClient: stockClientOfRound,
        tributary: tributaryOfRound,
        ratio: ratioOfRound,
        stockClientRatio: stockClientRatioOfRound,
      });
      if (protocolsWriteKey && protocolsMessages) {
        console.log(
          `round ${round_}/${settings.rounds}, phase 2b/5: tributary /v1/batch with a tracking plan ...`,
        );
        const protocolsOfRound = await measureTributary(server, protocolsWriteKey, protocolsMessages);
        tributaryRuns.push(protocolsOfRound);
        const protocolsRatio = round(
          protocolsOfRound.messagesPerSecond / tributaryOfRound.messagesPerSecond,
          3,
        );
        console.log(
          `round ${round_}/${settings.rounds}: ratio protocols/ingest ${protocolsRatio.toFixed(3)}`,
        );
        protocolsRounds.push({
          protocols: protocolsOfRound,
          ingest: tributaryOfRound,
          ratio: protocolsRatio,
        });
      }
      if (suppressionWriteKey && suppressionMessages) {
        console.log(
          `round ${round_}/${settings.rounds}, phase 2c/5: tributary /v1/batch to a source suppressing ${suppressedUsers} users ...`,
        );
        let suppressionOfRound = suppressionFirst;
        if (!suppressionOfRound) {
          suppressionOfRound = await measureTributary(server, suppressionWriteKey, suppressionMessages);
          tributaryRuns.push(suppressionOfRound);
        }
        const suppressionRatio = round(
          suppressionOfRound.messagesPerSecond / tributaryOfRound.messagesPerSecond,
          3,
        );
        console.log(
          `round ${round_}/${settings.rounds}: ratio suppression/ingest ${suppressionRatio.toFixed(3)}`,
        );
        suppressionRounds.push({
          suppression: suppressionOfRound,
          ingest: tributaryOfRound,
          ratio: suppressionRatio,
        });
      }
    }
    // Lost or duplicated: each stream grew by what was acknowledged as stored into it.
    const sum = (runs: Array<{ storedMessages: number; messagesOfFailedRequests: number }>) =>
      runs.reduce(
        (total, run) => ({
          stored: total.stored + run.storedMessages,
          failed: total.failed + run.messagesOfFailedRequests,
        }),
        { stored: 0, failed: 0 },
      );
    const ceilingTotals = sum(ceilingRuns);
    const tributaryTotals = sum(tributaryRuns);
    const duplicateAcks = ceilingRuns.reduce((total, run) => total + run.duplicateAcks, 0);
    const ingestFailures = [
      ...storedCountFailures(
        'JetStream ceilings',
        (await streamMessageCount(nats.url, CEILING_STREAM)) - ceilingStreamBefore,
        ceilingTotals.stored,
        ceilingTotals.failed,
      ),
      ...storedCountFailures(
        'tributary /v1/batch',
        (await streamMessageCount(nats.url, TRACKING_STREAM)) - trackingStreamBefore,
        tributaryTotals.stored,
        tributaryTotals.failed,
      ),
      ...(duplicateAcks > 0
        ? [`JetStream ceilings: ${duplicateAcks} fresh messageIds acknowledged as duplicates`]
        : []),
    ];
    console.log(
      `stored-message check: ${tributaryTotals.stored.toLocaleString('en-US')} messages answered as stored by /v1/batch, ` +
        `${ceilingTotals.stored.toLocaleString('en-US')} acknowledged to the ceilings; ` +
        (ingestFailures.length === 0 ? 'the streams hold exactly those' : ingestFailures.join('; ')),
    );
    failures.push(...ingestFailures);

    const median = medianBy(rounds, (entry) => entry.ratio);
    const { ceiling, ratio } = median;
    tributary = median.tributary;
    const stockMedian = medianBy(rounds, (entry) => entry.stockClientRatio);
    const goalMet = ratio >= GOAL_RATIO && tributary.latencyMs.p99 < GOAL_P99_MS;
    console.log(
      `ratios by round: ${rounds.map((entry) => entry.ratio.toFixed(3)).join(', ')} ` +
        `(to the stock client: ${rounds.map((entry) => entry.stockClientRatio.toFixed(3)).join(', ')}); ` +
        'the table shows the median round',
    );
    printTable(tributary, ceiling, stockMedian.stockClient, ratio, goalMet);
    console.log(
      `ratio tributary/stock-client: ${stockMedian.stockClientRatio.toFixed(3)}  ` +
        `(goal: >= ${GOAL_RATIO}: ${stockMedian.stockClientRatio >= GOAL_RATIO ? 'MET' : 'NOT MET'}; ` +
        `its median round, tributary ${stockMedian.tributary.messagesPerSecond.toLocaleString('en-US')} against ` +
        `${stockMedian.stockClient.messagesPerSecond.toLocaleString('en-US')} messages/s)`,
    );
    Object.assign(results, {
      messages: {
        templates: messages.templateCount,
        sentBytes: messages.sentBytes,
        storedBytes: messages.storedBytes,
      },
      tributary,
      ceiling,
      ratio,
      stockClient: stockMedian.stockClient,
      stockClientRatio: stockMedian.stockClientRatio,
      rounds,
      storedCheck: {
        tributary: tributaryTotals,
        ceilings: ceilingTotals,
        duplicateAcks,
        failures: ingestFailures,
      },
      goal: { ratioAtLeast: GOAL_RATIO, p99BelowMs: GOAL_P99_MS, met: goalMet },
    });
    if (suppressionRounds.length > 0) {
      const suppressionMedian = [...suppressionRounds].sort((a, b) => a.ratio - b.ratio)[
        Math.floor(suppressionRounds.length / 2)
      ];
      const suppressionGoalMet = suppressionMedian.ratio >= SUPPRESSION_GOAL_RATIO;
      console.log(
        `suppression/ingest ratios by round: ${suppressionRounds.map((entry) => entry.ratio.toFixed(3)).join(', ')}; ` +
          `median round: ${suppressionMedian.suppression.messagesPerSecond.toLocaleString('en-US')} msg/s with ${suppressedUsers} users suppressed, ` +
          `${suppressionMedian.ingest.messagesPerSecond.toLocaleString('en-US')} msg/s without, ` +
          `CPU ${suppressionMedian.suppression.cpuMsPerThousandMessages ?? 'n/a'} vs ${suppressionMedian.ingest.cpuMsPerThousandMessages ?? 'n/a'} ms/1k msg`,
      );
      console.log(
        `ratio suppression/ingest: ${suppressionMedian.ratio.toFixed(3)}  ` +
          `(goal: >= ${SUPPRESSION_GOAL_RATIO}: ${suppressionGoalMet ? 'MET' : 'NOT MET'})`,
      );
      results.suppression = {
        suppressedUsers,
        ratio: suppressionMedian.ratio,
        rounds: suppressionRounds,
        goal: { ratioAtLeast: SUPPRESSION_GOAL_RATIO, met: suppressionGoalMet },
      };
    }
    if (protocolsRounds.length > 0 && protocolsWriteKey) {
      await assertPlanEnforced(api, WORKSPACE, 'planned', protocolsWriteKey);
      const protocolsMedian = [...protocolsRounds].sort((a, b) => a.ratio - b.ratio)[
        Math.floor(protocolsRounds.length / 2)
      ];
      const protocolsGoalMet = protocolsMedian.ratio >= PROTOCOLS_GOAL_RATIO;
      console.log(
        `protocols/ingest ratios by round: ${protocolsRounds.map((entry) => entry.ratio.toFixed(3)).join(', ')}; ` +
          `median round: ${protocolsMedian.protocols.messagesPerSecond.toLocaleString('en-US')} msg/s with the plan, ` +
          `${protocolsMedian.ingest.messagesPerSecond.toLocaleString('en-US')} msg/s without, ` +
          `p99 ${protocolsMedian.protocols.latencyMs.p99} ms, ` +
          `CPU ${protocolsMedian.protocols.cpuMsPerThousandMessages ?? 'n/a'} vs ${protocolsMedian.ingest.cpuMsPerThousandMessages ?? 'n/a'} ms/1k msg`,
      );
      console.log(
        `ratio protocols/ingest: ${protocolsMedian.ratio.toFixed(3)}  ` +
          `(goal: >= ${PROTOCOLS_GOAL_RATIO}: ${protocolsGoalMet ? 'MET' : 'NOT MET'})`,
      );
      results.protocols = {
        plan: { events: 50, propertiesPerEvent: 10, commonSchema: 'context' },
        ratio: protocolsMedian.ratio,
        rounds: protocolsRounds,
        goal: { ratioAtLeast: PROTOCOLS_GOAL_RATIO, met: protocolsGoalMet },
      };
    }
    writeResults();
  }

  if (!runs('delivery') || tributary === null) {
    console.log('phases 3-4/5 (delivery, replay): not in BENCH_PHASES');
  } else {
    failures.push(...(await deliveryAndReplay(server, api, tributary.messagesPerSecond, results)));
    writeResults();
  }

  if (runs('postgres') && !runs('delivery')) {
    failures.push(...(await postgresPhase(server, api, results)));
    writeResults();
  }

  if (runs('actions')) {
    console.log(
      'actions: Actions Amplitude delivery against the same requests from a plain client, and against webhooks, in this process ...',
    );
    const actions = await measureActionsDelivery(
      numberSetting('BENCH_ACTIONS_MESSAGES', 2_000),
      numberSetting('BENCH_ACTIONS_CONCURRENCY', 16),
      settings.rounds,
      (round_, figures) =>
        console.log(
          `actions round ${round_}/${settings.rounds}: Actions ${figures.actionsMessagesPerSecond.toLocaleString('en-US')} ` +
            `messages/s, ceiling ${figures.ceilingMessagesPerSecond.toLocaleString('en-US')}, webhooks ` +
            `${figures.webhookMessagesPerSecond.toLocaleString('en-US')}; ratio ${figures.ceilingRatio.toFixed(3)}`,
        ),
    );
    printActionsTable(actions, ACTIONS_GOAL_RATIO);
    Object.assign(results, { actions });
    writeResults();
  }

  if (runs('functions')) {
    console.log(
      'functions: webhook delivery through a pass-through insert function against without, alternating ...',
    );
    const functions = await measureInsertFunction({
      api,
      workspace: WORKSPACE,
      sharedSecret: randomBytes(16).toString('hex'),
      ...(settings.cpuProfile && { profiler: server }),
      settings: { ...settings, seconds: settings.deliverySeconds },
    });
    printInsertFunction(functions);
    if (functions.failures.length > 0) console.log(`server output:\n${server.recentOutput}`);
    failures.push(...functions.failures);
    Object.assign(results, { functions });
    writeResults();
  }

  if (!runs('config')) {
    console.log('phase 5/5 (Config API latency): not in BENCH_PHASES');
  } else {
    console.log(
      `phase 5/5: Config API latency (${settings.configOperations} of each write and read, one at a time) ...`,
    );
    if (settings.cpuProfile) server.startCpuProfile();
    const configApi = await measureConfigApiLatency({
      baseUrl: server.baseUrl,
      adminToken,
      workspace: WORKSPACE,
      serverDataDirectory: dataDirectory,
      operations: settings.configOperations,
    });
    if (settings.cpuProfile)
      console.log(`server CPU profile (config): ${await server.stopCpuProfile('config')}`);
    printConfigApiTable(configApi);
    results.configApi = configApi;
    writeResults();
  }

  console.log(`results written to .bench/${RESULTS_FILE}`);
  if (failures.length > 0) throw new Error(failures.join('; '));
}

/** One round of phases 3 and 4 with the delivery ceiling measured just before them. */
interface DeliveryRound {
  ceiling: DeliveryCeilingResult;
  delivery: DeliveryResult;
  replay: ReplayResult | null;
  deliveryRatio: number;
  replayRatio: number | null;
}

/**
 * Phases 3 and 4, BENCH_ROUNDS times, each round on a source of its own after a delivery ceiling of its
 * own; then the steady load, the failing destination and the PostgreSQL phase. Returns what went wrong
 * (messages lost, duplicated, late or wrongly signed).
 */
async function deliveryAndReplay(
  server: TributaryServerProcess,
  api: ConfigApiClient,
  ingestMessagesPerSecond: number,
  results: Record<string, unknown>,
): Promise<string[]> {
  const failures: string[] = [];
  const sharedSecret = randomBytes(16).toString('hex');
  const routerConcurrency = Number(process.env['ROUTER_MAX_IN_FLIGHT'] ?? 64);
  const rounds: DeliveryRound[] = [];
  for (let round_ = 1; round_ <= settings.rounds; round_ += 1) {
    const label = `round ${round_}/${settings.rounds}`;
    // A source of its own per round, so the router's consumers see only the round's messages and the
    // replay's history is the round's.
    const deliverySource = round_ === 1 ? 'delivery' : `delivery-${round_}`;
    const deliveryWriteKey = await createSource(api, WORKSPACE, deliverySource);
    const deliveryMessages = createBenchMessages(deliveryWriteKey);
    const poster = new BatchPoster(server.baseUrl, deliveryWriteKey, settings.concurrency);
    cleanups.push(() => poster.close());
    const liveReceiver = await BenchWebhookReceiver.start(`live-${round_}`, sharedSecret);
    cleanups.push(() => liveReceiver.close());

    // The wire's own rate for the same bodies, a receiver of the same kind and the router's concurrency,
    // next to the phases it bounds.
    console.log(
      `${label}, delivery ceiling: a plain Node client, ${routerConcurrency} requests at a time ...`,
    );
    const ceiling = await measureDeliveryCeiling({
      messages: deliveryMessages,
      sharedSecret,
      requests: 20_000,
      concurrency: routerConcurrency,
    });
    failures.push(...ceiling.failures);
    console.log(
      `${label}, delivery ceiling: ${ceiling.messagesPerSecond.toLocaleString('en-US')} messages/s`,
    );

    console.log(
      `${label}, phase 3/5: webhook delivery (${settings.deliverySeconds} s of /v1/batch, then the drain) ...`,
    );
    // Anything before the probe message: the replay sends everything phase 3 sent.
    const replayFrom = new Date(Date.now() - 1000);
    if (settings.cpuProfile) server.startCpuProfile();
    const delivery = await measureDelivery({
      api,
      workspace: WORKSPACE,
      source: deliverySource,
      poster,
      messages: deliveryMessages,
      receiver: liveReceiver,
      sharedSecret,
      settings: { ...settings, seconds: settings.deliverySeconds },
      ingestMessagesPerSecond,
    });
    if (settings.cpuProfile)
      console.log(`server CPU profile (delivery): ${await server.stopCpuProfile(`delivery-${round_}`)}`);
    failures.push(...delivery.failures);

    let replay: ReplayResult | null = null;
    if (!delivery.complete) {
      console.log(`${label}, phase 4/5: skipped, phase 3 did not deliver every message in time`);
    } else {
      console.log(`${label}, phase 4/5: replay to a second webhook ...`);
      const replayReceiver = await BenchWebhookReceiver.start(`replay-${round_}`, sharedSecret);
      cleanups.push(() => replayReceiver.close());
      if (settings.cpuProfile) server.startCpuProfile();
      replay = await measureReplay({
        api,
        workspace: WORKSPACE,
        source: deliverySource,
        receiver: replayReceiver,
        sharedSecret,
        startTime: replayFrom,
        // The probe message, then phase 3's.
        expectedMessages: 1 + delivery.acceptedMessages,
        timeoutSeconds: settings.replayTimeoutSeconds,
        ingestMessagesPerSecond,
      });
      if (settings.cpuProfile)
        console.log(`server CPU profile (replay): ${await server.stopCpuProfile(`replay-${round_}`)}`);
      failures.push(...replay.failures);
    }
    const deliveryRatio = round(delivery.messagesPerSecond / ceiling.messagesPerSecond, 3);
    const replayRatio = replay ? round(replay.messagesPerSecond / ceiling.messagesPerSecond, 3) : null;
    console.log(
      `${label}: delivery ${delivery.messagesPerSecond.toLocaleString('en-US')} messages/s, ratio ${deliveryRatio.toFixed(3)}; ` +
        `replay ${replay ? `${replay.messagesPerSecond.toLocaleString('en-US')} messages/s, ratio ${replayRatio!.toFixed(3)}` : 'n/a'}`,
    );
    rounds.push({ ceiling, delivery, replay, deliveryRatio, replayRatio });
    await liveReceiver.close();
  }

  // Each ratio's median round, as ingest reports it.
  const deliveryMedian = medianBy(rounds, (entry) => entry.deliveryRatio);
  const replayRounds = rounds.filter((entry) => entry.replayRatio !== null);
  const replayMedian = replayRounds.length > 0 ? medianBy(replayRounds, (entry) => entry.replayRatio!) : null;
  console.log(
    `delivery/ceiling ratios by round: ${rounds.map((entry) => entry.deliveryRatio.toFixed(3)).join(', ')}; ` +
      `replay/ceiling: ${rounds.map((entry) => entry.replayRatio?.toFixed(3) ?? 'n/a').join(', ')}; ` +
      'the table shows the median delivery round and the median replay',
  );
  printDeliveryTable(deliveryMedian.delivery, replayMedian?.replay ?? null);
  results.delivery = deliveryMedian.delivery;
  results.replay = replayMedian?.replay ?? null;
  results.deliveryCeiling = {
    messagesPerSecond: deliveryMedian.ceiling.messagesPerSecond,
    deliveryRatio: deliveryMedian.deliveryRatio,
    replayRatio: replayMedian?.replayRatio ?? null,
    replayCeilingMessagesPerSecond: replayMedian?.ceiling.messagesPerSecond ?? null,
    rounds,
    goal: { ratioAtLeast: DELIVERY_GOAL_RATIO },
  };
  const ceiling = deliveryMedian.ceiling;
  console.log(
    `delivery ceiling: ${ceiling.messagesPerSecond.toLocaleString('en-US')} messages/s ` +
      `(${ceiling.requests.toLocaleString('en-US')} requests over ${ceiling.spanSeconds} s, the median delivery round's)`,
  );
  const goalText = (ratio: number | null) =>
    `(goal: >= ${DELIVERY_GOAL_RATIO}: ${ratio !== null && ratio >= DELIVERY_GOAL_RATIO ? 'MET' : 'NOT MET'})`;
  console.log(
    `ratio delivery/ceiling: ${deliveryMedian.deliveryRatio.toFixed(3)}  ${goalText(deliveryMedian.deliveryRatio)}`,
  );
  console.log(
    `ratio replay/ceiling: ${replayMedian ? replayMedian.replayRatio!.toFixed(3) : 'n/a'}  ` +
      goalText(replayMedian?.replayRatio ?? null),
  );

  // Latency a user feels: half of the delivery rate, steadily.
  const steadyRate = deliveryMedian.delivery.messagesPerSecond / 2;
  if (steadyRate <= 0) {
    failures.push('steady load: no delivery rate to take half of');
  } else {
    console.log(
      `steady load: ${settings.steadySeconds} s at ${Math.round(steadyRate).toLocaleString('en-US')} messages/s ` +
        '(half of the delivery rate), answer to webhook arrival per message ...',
    );
    const steady = await measureSteadyLatency({
      api,
      workspace: WORKSPACE,
      baseUrl: server.baseUrl,
      sharedSecret,
      messagesPerSecond: steadyRate,
      seconds: settings.steadySeconds,
      settings,
    });
    printSteadyLatency(steady);
    results.steady = steady;
    failures.push(...steady.failures);
  }

  console.log('failing destination: a healthy webhook alone, then beside one that never answers ...');
  const isolation = await measureFailingDestination({
    api,
    workspace: WORKSPACE,
    baseUrl: server.baseUrl,
    sharedSecret,
    settings: { ...settings, seconds: settings.deliverySeconds },
  });
  results.failingDestination = isolation;
  console.log(
    `failing destination: healthy alone ${isolation.alone.messagesPerSecond.toLocaleString('en-US')} messages/s ` +
      `(${isolation.alone.deliveredMessages}/${isolation.alone.acceptedMessages}), beside a failing one ` +
      `${isolation.besideFailing.messagesPerSecond.toLocaleString('en-US')} messages/s ` +
      `(${isolation.besideFailing.deliveredMessages}/${isolation.besideFailing.acceptedMessages}); ` +
      `${isolation.failingRequests} requests to the failing one`,
  );
  console.log(`ratio healthy beside failing/alone: ${isolation.ratio.toFixed(3)} (goal: >= 0.9)`);
  failures.push(...isolation.alone.failures, ...isolation.besideFailing.failures);

  failures.push(...(await postgresPhase(server, api, results)));
  return failures;
}

/** The PostgreSQL phase; returns what went wrong (messages not stored in time). */
async function postgresPhase(
  server: TributaryServerProcess,
  api: ConfigApiClient,
  results: Record<string, unknown>,
): Promise<string[]> {
  const routerConcurrency = Number(process.env['ROUTER_MAX_IN_FLIGHT'] ?? 64);
  console.log(
    `postgres: ${settings.postgresMessages.toLocaleString('en-US')} messages ingested for a disabled postgres ` +
      'destination, a replay of them into it timed to its last row, then a raw pg insert of its rows ...',
  );
  let profile: string | undefined;
  const postgres = await measurePostgres({
    api,
    workspace: WORKSPACE,
    baseUrl: server.baseUrl,
    databaseUrl:
      process.env['BENCH_DATABASE_URL'] ??
      process.env['TEST_DATABASE_URL'] ??
      'postgres://postgres@127.0.0.1:5432/postgres',
    rowsPerStatement: routerConcurrency,
    messages: settings.postgresMessages,
    rounds: settings.rounds,
    onRound: (round_, figures) =>
      console.log(
        `postgres round ${round_}/${settings.rounds}: ${figures.rows} rows in ${figures.spanSeconds} s = ` +
          `${figures.rowsPerSecond.toLocaleString('en-US')} rows/s, raw pg ${figures.ceiling.rowsPerSecond.toLocaleString('en-US')} rows/s, ` +
          `ratio ${figures.ratio.toFixed(3)}`,
      ),
    serverCpuTimeMs: () => server.cpuTimeMs(),
    settings: {
      ...settings,
      drainTimeoutSeconds: Math.max(settings.drainTimeoutSeconds, settings.replayTimeoutSeconds),
    },
    drain: settings.cpuProfile
      ? {
          started: () => server.startCpuProfile(),
          finished: async () => {
            profile = await server.stopCpuProfile('postgres');
          },
        }
      : undefined,
  });
  if (profile) console.log(`server CPU profile (postgres drain): ${profile}`);
  if (typeof postgres === 'string') {
    console.log(`postgres: skipped, ${postgres}`);
  } else {
    results.postgres = postgres;
    console.log(
      `postgres: ${postgres.deliveredMessages}/${postgres.acceptedMessages} messages delivered, ${postgres.rows} rows ` +
        `in ${postgres.spanSeconds} s = ${postgres.rowsPerSecond.toLocaleString('en-US')} rows/s; raw pg multi-row ` +
        `insert of the same rows: ${postgres.ceiling.rowsPerSecond.toLocaleString('en-US')} rows/s ` +
        `(${postgres.ceiling.rows} rows in ${postgres.ceiling.seconds} s)`,
    );
    console.log(
      `postgres drain: replay ${postgres.replayState}, first row ${postgres.firstRowSeconds ?? 'n/a'} s and last row ` +
        `${postgres.spanSeconds} s after the replay request; server CPU ` +
        `${postgres.serverCpuMsPerThousandMessages ?? 'n/a'} ms per 1,000 messages`,
    );
    console.log(
      `postgres/ceiling ratios by round: ${postgres.rounds.map((entry) => entry.ratio.toFixed(3)).join(', ')}; ` +
        'the lines above show the median round',
    );
    console.log(
      `ratio postgres/ceiling: ${postgres.ratio.toFixed(3)}  ` +
        `(goal: >= ${DELIVERY_GOAL_RATIO}: ${postgres.ratio >= DELIVERY_GOAL_RATIO ? 'MET' : 'NOT MET'})`,
    );
  }
  return typeof postgres === 'string' ? [] : postgres.failures;
}

type TributaryResult = PhaseResult & {
  peakRssMb: number | null;
  peakRssDuringPhaseMb: number | null;
  cpuMsPerThousandMessages: number | null;
  /** Messages the server answered as stored, warm-up included (checked against TRACKING afterwards). */
  storedMessages: number;
  /** Messages in requests that failed: they may or may not be stored. */
  messagesOfFailedRequests: number;
};

async function measureTributary(
  server: TributaryServerProcess,
  writeKey: string,
  messages: BenchMessages,
): Promise<TributaryResult> {
  const poster = new BatchPoster(server.baseUrl, writeKey, settings.concurrency);

  let peakRss = 0;
  const sample = () => (peakRss = Math.max(peakRss, server.memory()?.rssBytes ?? 0));
  const sampler = setInterval(sample, 100);
  const cpuBefore = server.cpuTimeMs();
  let storedMessages = 0;
  let messagesOfFailedRequests = 0;
  try {
    const result = await runClosedLoop({
      ...settings,
      send: async () => {
        try {
          const stored = await poster.send(messages.batchBody(settings.batchSize), settings.batchSize);
          storedMessages += stored;
          return stored;
        } catch (error) {
          messagesOfFailedRequests += settings.batchSize;
          throw error;
        }
      },
    });
    const cpuAfter = server.cpuTimeMs();
    const memory = server.memory();
    const totalMessages =
      result.acceptedMessages * ((settings.seconds + settings.warmupSeconds) / settings.seconds);
    return {
      ...result,
      storedMessages,
      messagesOfFailedRequests,
      peakRssMb: memory ? megabytes(memory.peakRssBytes) : null,
      peakRssDuringPhaseMb: peakRss > 0 ? megabytes(peakRss) : null,
      cpuMsPerThousandMessages:
        cpuBefore === null || cpuAfter === null
          ? null
          : round(((cpuAfter - cpuBefore) / totalMessages) * 1000, 2),
    };
  } finally {
    clearInterval(sampler);
    poster.close();
  }
}

interface IngestRound {
  /** The pipelined publisher's rate: the ceiling. */
  ceiling: CeilingResult;
  stockClient: CeilingResult;
  tributary: TributaryResult;
  ratio: number;
  stockClientRatio: number;
}

/** The entry with the median value (the upper one of an even count), as the rounds are reported. */
function medianBy<T>(entries: readonly T[], value: (entry: T) => number): T {
  return [...entries].sort((a, b) => value(a) - value(b))[Math.floor(entries.length / 2)];
}

function printTable(
  tributary: TributaryResult,
  ceiling: CeilingResult,
  stockClient: CeilingResult,
  ratio: number,
  goalMet: boolean,
): void {
  const rows: string[][] = [
    ['', 'messages/s', 'p50 ms', 'p99 ms', 'max ms', 'peak RSS MB', 'CPU ms/1k msg', 'failed requests'],
    [
      'tributary /v1/batch',
      tributary.messagesPerSecond.toLocaleString('en-US'),
      String(tributary.latencyMs.p50),
      String(tributary.latencyMs.p99),
      String(tributary.latencyMs.max),
      tributary.peakRssMb === null ? 'n/a' : String(tributary.peakRssMb),
      tributary.cpuMsPerThousandMessages === null ? 'n/a' : String(tributary.cpuMsPerThousandMessages),
      String(tributary.failedRequests),
    ],
    ...[['JetStream ceiling', ceiling] as const, ['JetStream stock client', stockClient] as const].map(
      ([name, baseline]) => [
        name,
        baseline.messagesPerSecond.toLocaleString('en-US'),
        String(baseline.latencyMs.p50),
        String(baseline.latencyMs.p99),
        String(baseline.latencyMs.max),
        String(baseline.peakRssDuringPhaseMb),
        String(baseline.cpuMsPerThousandMessages),
        String(baseline.failedRequests),
      ],
    ),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  console.log('');
  for (const row of rows) {
    console.log(
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  '),
    );
  }
  console.log('');
  console.log(
    `ratio tributary/ceiling: ${ratio.toFixed(3)}  ` +
      `(goal: ratio >= ${GOAL_RATIO} and tributary p99 < ${GOAL_P99_MS} ms: ${goalMet ? 'MET' : 'NOT MET'})`,
  );
  for (const [name, phase] of [
    ['tributary', tributary],
    ['ceiling', ceiling],
    ['stock client', stockClient],
  ] as const) {
    for (const [reason, count] of Object.entries(phase.failures))
      console.log(`${name} failures: ${count} x ${reason}`);
  }
  console.log(
    'peak RSS: tributary = the server process over its whole life (VmHWM); ' +
      'ceiling and stock client = the bench process while it publishes (it also holds the HTTP load generator code). ' +
      'Ceiling: the stored bytes and Nats-Msg-Ids through the pipelined publisher the tracking API uses; ' +
      "stock client: the client library's js.publish per message.",
  );
}

function megabytes(bytes: number): number {
  return round(bytes / (1024 * 1024), 1);
}

function natsServerVersion(binary: string): string | null {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the server and nats-server`);
    void cleanUp().finally(() => process.exit(130));
  });
}

main()
  .catch((error) => {
    console.error('bench failed:', error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  })
  .finally(cleanUp);
