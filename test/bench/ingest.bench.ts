/**
 * `npm run bench`: how close `/v1/batch` comes to publishing straight to JetStream, how fast the
 * router then delivers and replays what was ingested, and how long Config API writes and reads take.
 *
 * One run, one nats-server, one Tributary server (its real entry point, in a child process), six phases:
 * 1. ceiling (`jetstream-ceiling.phase.ts`): the stored JSON of every message, with its `Nats-Msg-Id`,
 *    published from this process through the project's own pipelined publisher (the one the tracking
 *    API uses) with the same batch size and concurrency: `ratio tributary/ceiling`. The same through the
 *    client library's `js.publish` per message is kept as a second line, `ratio tributary/stock-client`;
 * 2. tributary (`ingest.phase.ts`, with phase 1): the same messages as analytics-node sends them, POSTed
 *    to `/v1/batch` over keep-alive HTTP connections, with the same batch size, concurrency and duration;
 *    in each round also to the floor (`ingest-floor.server.ts`), a bare `node:http` server that only
 *    parses and publishes: `ratio floor/ceiling` bounds `ratio tributary/ceiling` on the machine, and
 *    `ratio tributary/floor` says how much of that Tributary keeps;
 * 3. delivery (`delivery-and-replay.phase.ts`, with phase 4): a second source with one enabled webhooks
 *    destination pointing at a receiver in this process (127.0.0.1, answers 200 at once, checks
 *    `X-Signature` on a sample). After one probe
 *    message has arrived, the same load loop drives `/v1/batch` for BENCH_DELIVERY_SECONDS, then the
 *    bench waits until every accepted message has arrived: delivered messages/s (first to last
 *    arrival), end-to-end latency (arrival minus the send time in the analytics-node messageId),
 *    backlog drain time after the load, and the ratio to phase 2's ingest rate;
 * 4. replay: a second, disabled webhooks destination on that source (`webhooks-replay`) at a second
 *    receiver, and a replay from before phase 3 until the Config API shows it COMPLETED: replayed
 *    messages/s (replay request to last arrival) and the ratio to phase 2's ingest rate;
 *    after each replay, the replay floor (`replay-floor.phase.ts`): a bare router that reads the same
 *    messages from JetStream, posts and acks them (`ratio replay floor/ceiling`, `ratio replay/floor`);
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
 * phase (ingest, delivery, replay) to `.bench/`, and for the Actions phase, which runs in this process,
 * one of this process's main thread and one of each worker thread per round (summarize one with
 * `node test/bench/summarize-cpu-profile.js <file>`; with BENCH_HEAP_PROFILE=1 also a sampling heap profile
 * of everything allocated, `node test/bench/summarize-heap-profile.js <file>`), BENCH_SERVER_NODE_OPTIONS (node
 * flags of the server),
 * BENCH_CONFIG_OPERATIONS (200), BENCH_PHASES (all; or a comma-separated list of `ingest` = phases 1-2,
 * `suppression` = phase 2 again against a source suppressing BENCH_SUPPRESSED_USERS (10,000) users
 * (`suppression.phase.ts`), alternating with phase 2 and printed as `ratio suppression/ingest`, which needs `ingest`,
 * `protocols` = phase 2 again against a source connected to a tracking plan (`protocols.phase.ts`),
 * alternating with phase 2 in each round and printed as `ratio protocols/ingest`, which needs `ingest`,
 * `delivery` = phases 3-4 with the steady load, which needs `ingest`, `config` = phase 5, and `actions`: Actions Amplitude
 * delivery against the same requests from a plain client (and webhooks), `actions-delivery.phase.ts`; BENCH_ACTIONS_MESSAGES (6000),
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
import { freePort, NatsServerProcess } from '@tributary/event-log/testing';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigApiClient } from '../support/config-api.client';
import { measureActionsDelivery, printActionsTable } from './actions-delivery.phase';
import { createBenchMessages } from './bench-messages';
import { createSource, createWorkspace } from './bench-resources';
import { durationMs, numberSetting, readSettings, type BenchRun, type PhaseGroup } from './bench-run';
import { measureConfigApiLatency, printConfigApiTable } from './config-api-latency.phase';
import { measureDedupeMemory, printDedupeMemory } from './dedupe-memory.phase';
import { deliveryAndReplay, postgresPhase } from './delivery-and-replay.phase';
import { measureIngest, type TributaryResult } from './ingest.phase';
import { measureInsertFunction, printInsertFunction } from './insert-function.phase';
import { TributaryServerProcess } from './tributary-server.process';

/** Goal of `ratio actions/ceiling`. */
const ACTIONS_GOAL_RATIO = 0.5;

const settings = readSettings();

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
  // Its profiling listener lets the dedupe phase read its heap after a forced collection.
  const natsProfilePort = await freePort();
  const nats = await NatsServerProcess.start({ extraArguments: ['--profile', String(natsProfilePort)] });
  cleanups.push(() => nats.dispose());
  const dataDirectory = mkdtempSync(join(tmpdir(), 'tributary-bench-'));
  cleanups.push(() => rmSync(dataDirectory, { recursive: true, force: true }));

  const adminToken = generateAccessTokenSecret();
  const server = await startServer(nats.url, dataDirectory, adminToken);
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
  const run: BenchRun = {
    server,
    natsPid: nats.pid ?? 0,
    natsUrl: nats.url,
    api,
    settings,
    workspace: WORKSPACE,
    results,
    cleanups,
  };

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
      natsProfileUrl: `http://127.0.0.1:${natsProfilePort}`,
    });
    printDedupeMemory(dedupe);
    results.dedupe = dedupe;
    writeResults();
  }

  let tributary: TributaryResult | null = null;
  if (!runs('ingest')) {
    console.log('phases 1-2/5 (ingest): not in BENCH_PHASES');
  } else {
    const ingest = await measureIngest(run, nats.url);
    tributary = ingest.tributary;
    failures.push(...ingest.failures);
    writeResults();
  }

  if (!runs('delivery') || tributary === null) {
    console.log('phases 3-4/5 (delivery, replay): not in BENCH_PHASES');
  } else {
    failures.push(...(await deliveryAndReplay(run, tributary.messagesPerSecond)));
    writeResults();
  }

  if (runs('postgres') && !runs('delivery')) {
    failures.push(...(await postgresPhase(run)));
    writeResults();
  }

  if (runs('actions')) {
    console.log(
      'actions: Actions Amplitude delivery against the same requests from a plain client, and against webhooks, in this process ...',
    );
    const actions = await measureActionsDelivery(
      numberSetting('BENCH_ACTIONS_MESSAGES', 6_000),
      numberSetting('BENCH_ACTIONS_CONCURRENCY', 16),
      settings.rounds,
      (round_, figures) =>
        console.log(
          `actions round ${round_}/${settings.rounds}: Actions ${figures.actionsMessagesPerSecond.toLocaleString('en-US')} ` +
            `messages/s, ceiling ${figures.ceilingMessagesPerSecond.toLocaleString('en-US')}, webhooks ` +
            `${figures.webhookMessagesPerSecond.toLocaleString('en-US')}; ratio ${figures.ceilingRatio.toFixed(3)}`,
        ),
      settings.cpuProfile ? resultsDirectory : undefined,
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
      server,
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

/** The Tributary server under test: its real entry point in a child process, on `natsUrl`. */
function startServer(
  natsUrl: string,
  dataDirectory: string,
  adminToken: string,
): Promise<TributaryServerProcess> {
  if (settings.cpuProfile) mkdirSync(resultsDirectory, { recursive: true });
  return TributaryServerProcess.start({
    environment: {
      PORT: '0',
      HOST: '127.0.0.1',
      // The bench does not scrape; a free port keeps it from clashing with a local Tributary on 9464.
      METRICS_PORT: '0',
      DATA_DIR: dataDirectory,
      NATS_URL: natsUrl,
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
