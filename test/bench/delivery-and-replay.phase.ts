/**
 * Phases 3 and 4 of `npm run bench` (see ingest.bench.ts's header): webhook delivery and replay,
 * BENCH_ROUNDS times, each against a delivery ceiling of its own; then the steady load, the failing
 * destination and the PostgreSQL phase.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { BatchPoster } from './batch-poster';
import { createBenchMessages } from './bench-messages';
import { createSource, sourceIdOf } from './bench-resources';
import type { BenchRun } from './bench-run';
import {
  measureDeliveryCeiling,
  type DeliveryCeilingClient,
  type DeliveryCeilingResult,
} from './delivery-ceiling.phase';
import {
  measureDelivery,
  measureReplay,
  printDeliveryTable,
  type DeliveryResult,
  type ReplayResult,
} from './delivery-phases';
import { measureFailingDestination } from './failing-destination.phase';
import { medianBy, round } from './load-loop';
import { measurePostgres, type PostgresRound } from './postgres.phase';
import { measureReplayFloor, type ReplayFloorResult } from './replay-floor.phase';
import { measureSteadyLatency, printSteadyLatency } from './steady-latency.phase';
import { processCpuTimeMs } from './tributary-server.process';
import { BenchWebhookReceiver } from './webhook-receiver';

/** Goal of `ratio delivery/ceiling`, `ratio replay/ceiling` and `ratio postgres/ceiling`. */
const DELIVERY_GOAL_RATIO = 0.8;
/**
 * The delivery ceiling's timed requests, 3.5-5 s of them, after its untimed warm-up: until 2026-11-28
 * 20,000 from a cold thread, about 1.5 s, whose first requests ran cold code and whose few seconds
 * caught the machine's fast and slow moments alone (one run read 14,800-23,800 messages/s).
 */
const CEILING_REQUESTS = 80_000;
const CEILING_WARMUP_REQUESTS = 10_000;

/**
 * A floor's two lines, from its median round by `floor/ceiling`. No goal: the first says how much of
 * the ceiling a router keeps that does only the wire's work, which bounds the path's ratio to the
 * ceiling on the machine; the second how much of that Tributary keeps.
 */
function printFloor<Round>(
  path: string,
  measured: readonly Round[],
  ratio: { floor(entry: Round): number; toFloor(entry: Round): number },
  describe: (median: Round) => string,
): { median: Round; toFloor: number } {
  const median = medianBy(measured, ratio.floor);
  const toFloor = ratio.toFloor(medianBy(measured, ratio.toFloor));
  const byRound = (of: (entry: Round) => number) => measured.map((entry) => of(entry).toFixed(3)).join(', ');
  console.log(
    `ratio ${path} floor/ceiling: ${ratio.floor(median).toFixed(3)}  (no goal: ${describe(median)}; ` +
      `by round: ${byRound(ratio.floor)})`,
  );
  console.log(`ratio ${path}/floor: ${toFloor.toFixed(3)}  (no goal: by round ${byRound(ratio.toFloor)})`);
  return { median, toFloor };
}

/** The replay floor's lines: a router that only reads, posts and acks. */
function printReplayFloor(rounds: readonly DeliveryRound[], results: Record<string, unknown>): void {
  const measured = rounds.filter((entry) => entry.floor !== null && entry.replay !== null);
  if (measured.length === 0) return;
  const { median, toFloor } = printFloor(
    'replay',
    measured,
    {
      floor: (entry) => entry.floorRatio!,
      toFloor: (entry) => round(entry.replay!.messagesPerSecond / entry.floor!.messagesPerSecond, 3),
    },
    ({ floor }) => {
      const cpu = floor!.cpuUs;
      return (
        `a bare router that only reads the stored messages, posts them and acks them, ` +
        `${floor!.messagesPerSecond.toLocaleString('en-US')} messages/s; CPU µs per message ` +
        (cpu
          ? `${cpu.total} (router ${cpu.router}, receiver ${cpu.receiver}, nats-server ${cpu.natsServer})`
          : 'n/a')
      );
    },
  );
  results.replayFloor = {
    messagesPerSecond: median.floor!.messagesPerSecond,
    cpuUs: median.floor!.cpuUs,
    floorRatio: median.floorRatio,
    replayToFloor: toFloor,
  };
}

/** The PostgreSQL floor's lines: a router that only reads the stored messages, writes their rows and acks. */
function printPostgresFloor(rounds: readonly PostgresRound[], results: Record<string, unknown>): void {
  const measured = rounds.filter((entry) => entry.floor !== null);
  if (measured.length === 0) return;
  const { median, toFloor } = printFloor(
    'postgres',
    measured,
    {
      floor: (entry) => entry.floor!.ratio,
      toFloor: (entry) => round(entry.rowsPerSecond / entry.floor!.rowsPerSecond, 3),
    },
    ({ floor }) => {
      const cpu = floor!.cpuUs;
      return (
        `a bare router that only reads the stored messages, writes their rows and acks them, ` +
        `${floor!.rowsPerSecond.toLocaleString('en-US')} rows/s; CPU µs per message ` +
        (cpu ? `router ${cpu.router}, nats-server ${cpu.natsServer}` : 'n/a')
      );
    },
  );
  results.postgresFloor = {
    rowsPerSecond: median.floor!.rowsPerSecond,
    cpuUs: median.floor!.cpuUs,
    floorRatio: median.floor!.ratio,
    postgresToFloor: toFloor,
  };
}

/** One round of phases 3 and 4 with the delivery ceiling measured just before them. */
interface DeliveryRound {
  ceiling: DeliveryCeilingResult;
  /** The same through `node:http`, the ceiling's client until 2026-11-28: to compare with earlier figures. */
  nodeHttpCeiling: DeliveryCeilingResult;
  delivery: DeliveryResult;
  replay: ReplayResult | null;
  /** A bare router reading the same messages (`replay-floor.phase.ts`), after the replay. */
  floor: ReplayFloorResult | null;
  deliveryRatio: number;
  replayRatio: number | null;
  /** floor over ceiling: what `ratio replay/ceiling` could read were the router's own work free. */
  floorRatio: number | null;
  /** CPU µs per message of each process, to see where a ratio below 1 goes on a machine that is all busy. */
  cpu: { ceiling: CpuPerMessage | null; delivery: CpuPerMessage | null; replay: CpuPerMessage | null };
}

/** CPU µs per message by process; null where a reading is missing (off Linux). */
interface CpuPerMessage {
  server: number | null;
  /** Of `server`, its main thread's: the event loop the router runs on, apart from GC and I/O helpers. */
  serverMainThread: number | null;
  natsServer: number | null;
  /**
   * The bench's main thread (the receivers, and the /v1/batch load during delivery), and for the
   * ceiling its client's thread too.
   */
  bench: number;
  total: number | null;
}

/**
 * CPU time so far in ms of what a delivery runs on: the server, nats-server and the bench's main thread.
 * The main thread's alone, so a ceiling's figure leaves out its client thread's start.
 */
function cpuReading(run: BenchRun) {
  const { user, system } = process.threadCpuUsage();
  return {
    server: run.server.cpuTimeMs(),
    serverMainThread: processCpuTimeMs(run.server.pid, run.server.pid),
    natsServer: processCpuTimeMs(run.natsPid),
    bench: (user + system) / 1000,
  };
}

function cpuPerMessage(
  before: ReturnType<typeof cpuReading>,
  after: ReturnType<typeof cpuReading>,
  messages: number,
  otherBenchThreadsMs = 0,
): CpuPerMessage | null {
  if (messages <= 0) return null;
  const perMessage = (from: number | null, to: number | null) =>
    from === null || to === null ? null : round(((to - from) * 1000) / messages, 1);
  const server = perMessage(before.server, after.server);
  const natsServer = perMessage(before.natsServer, after.natsServer);
  const bench = perMessage(before.bench, after.bench + otherBenchThreadsMs)!;
  return {
    server,
    serverMainThread: perMessage(before.serverMainThread, after.serverMainThread),
    natsServer,
    bench,
    total: server === null || natsServer === null ? null : round(server + natsServer + bench, 1),
  };
}

/**
 * Phases 3 and 4, BENCH_ROUNDS times, each round on a source of its own after a delivery ceiling of its
 * own; then the steady load, the failing destination and the PostgreSQL phase. Returns what went wrong
 * (messages lost, duplicated, late or wrongly signed).
 */
export async function deliveryAndReplay(run: BenchRun, ingestMessagesPerSecond: number): Promise<string[]> {
  const { server, api, settings, results, cleanups, workspace: WORKSPACE } = run;
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
    // next to the phases it bounds: through the client the webhooks adapter uses, and through `node:http`.
    console.log(
      `${label}, delivery ceiling: a plain Node client, ${routerConcurrency} requests at a time ...`,
    );
    const ceilingOf = async (client: DeliveryCeilingClient) => {
      let cpuBefore = cpuReading(run);
      let cpuAfter = cpuBefore;
      const result = await measureDeliveryCeiling({
        timed: { started: () => (cpuBefore = cpuReading(run)), ended: () => (cpuAfter = cpuReading(run)) },
        messages: deliveryMessages,
        sharedSecret,
        requests: CEILING_REQUESTS,
        warmupRequests: CEILING_WARMUP_REQUESTS,
        concurrency: routerConcurrency,
        client,
      });
      failures.push(...result.failures);
      const cpu = cpuPerMessage(cpuBefore, cpuAfter, result.requests, result.clientCpuMs ?? 0);
      return { result, cpu: result.clientCpuMs === null ? null : cpu };
    };
    const { result: ceiling, cpu: ceilingCpu } = await ceilingOf('undici');
    const { result: nodeHttpCeiling } = await ceilingOf('node:http');
    console.log(
      `${label}, delivery ceiling: ${ceiling.messagesPerSecond.toLocaleString('en-US')} messages/s ` +
        `(through node:http: ${nodeHttpCeiling.messagesPerSecond.toLocaleString('en-US')})`,
    );

    console.log(
      `${label}, phase 3/5: webhook delivery (${settings.deliverySeconds} s of /v1/batch, then the drain) ...`,
    );
    // Anything before the probe message: the replay sends everything phase 3 sent.
    const replayFrom = new Date(Date.now() - 1000);
    if (settings.cpuProfile) server.startCpuProfile();
    const deliveryCpuBefore = cpuReading(run);
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
    const deliveryCpu = cpuPerMessage(deliveryCpuBefore, cpuReading(run), delivery.deliveredMessages);
    if (settings.cpuProfile)
      console.log(`server CPU profile (delivery): ${await server.stopCpuProfile(`delivery-${round_}`)}`);
    failures.push(...delivery.failures);

    let replay: ReplayResult | null = null;
    let replayCpu: CpuPerMessage | null = null;
    let floor: ReplayFloorResult | null = null;
    if (!delivery.complete) {
      console.log(`${label}, phase 4/5: skipped, phase 3 did not deliver every message in time`);
    } else {
      console.log(`${label}, phase 4/5: replay to a second webhook ...`);
      const replayReceiver = await BenchWebhookReceiver.start(`replay-${round_}`, sharedSecret);
      cleanups.push(() => replayReceiver.close());
      if (settings.cpuProfile) server.startCpuProfile();
      const replayCpuBefore = cpuReading(run);
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
      replayCpu = cpuPerMessage(replayCpuBefore, cpuReading(run), replay.replayedMessages);
      if (settings.cpuProfile)
        console.log(`server CPU profile (replay): ${await server.stopCpuProfile(`replay-${round_}`)}`);
      failures.push(...replay.failures);

      console.log(
        `${label}, phase 4b/5: the replay floor (a bare router that only reads, posts and acks) ...`,
      );
      floor = await measureReplayFloor({
        natsUrl: run.natsUrl,
        natsPid: run.natsPid,
        name: `bench-replay-floor-${round_}`,
        sourceId: await sourceIdOf(api, WORKSPACE, deliverySource),
        messages: 1 + delivery.acceptedMessages,
        sharedSecret,
      });
      failures.push(...floor.failures);
    }
    const deliveryRatio = round(delivery.messagesPerSecond / ceiling.messagesPerSecond, 3);
    const replayRatio = replay ? round(replay.messagesPerSecond / ceiling.messagesPerSecond, 3) : null;
    const floorRatio = floor ? round(floor.messagesPerSecond / ceiling.messagesPerSecond, 3) : null;
    console.log(
      `${label}: delivery ${delivery.messagesPerSecond.toLocaleString('en-US')} messages/s, ratio ${deliveryRatio.toFixed(3)}; ` +
        `replay ${replay ? `${replay.messagesPerSecond.toLocaleString('en-US')} messages/s, ratio ${replayRatio!.toFixed(3)}` : 'n/a'}; ` +
        `floor ${floor ? `${floor.messagesPerSecond.toLocaleString('en-US')} messages/s, ratio ${floorRatio!.toFixed(3)}` : 'n/a'}`,
    );
    rounds.push({
      ceiling,
      nodeHttpCeiling,
      delivery,
      replay,
      floor,
      deliveryRatio,
      replayRatio,
      floorRatio,
      cpu: { ceiling: ceilingCpu, delivery: deliveryCpu, replay: replayCpu },
    });
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
  // Against the ceiling's client until 2026-11-28, so figures compare with the earlier ones.
  const toNodeHttp = (entry: DeliveryRound, result: { messagesPerSecond: number } | null) =>
    result ? round(result.messagesPerSecond / entry.nodeHttpCeiling.messagesPerSecond, 3) : null;
  const medianOf = (values: number[]) => (values.length > 0 ? medianBy(values, (ratio) => ratio) : null);
  const deliveryToNodeHttp = rounds.map((entry) => toNodeHttp(entry, entry.delivery)!);
  const replayToNodeHttp = rounds
    .map((entry) => toNodeHttp(entry, entry.replay))
    .filter((ratio): ratio is number => ratio !== null);
  results.deliveryCeiling = {
    messagesPerSecond: deliveryMedian.ceiling.messagesPerSecond,
    deliveryRatio: deliveryMedian.deliveryRatio,
    replayRatio: replayMedian?.replayRatio ?? null,
    replayCeilingMessagesPerSecond: replayMedian?.ceiling.messagesPerSecond ?? null,
    nodeHttp: { deliveryRatio: medianOf(deliveryToNodeHttp), replayRatio: medianOf(replayToNodeHttp) },
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
  console.log(
    `against the ceiling through node:http (its client until 2026-11-28), median rounds: delivery ` +
      `${medianOf(deliveryToNodeHttp)?.toFixed(3) ?? 'n/a'}, replay ${medianOf(replayToNodeHttp)?.toFixed(3) ?? 'n/a'}; ` +
      `by round: delivery ${deliveryToNodeHttp.map((ratio) => ratio.toFixed(3)).join(', ')}; ` +
      `replay ${replayToNodeHttp.map((ratio) => ratio.toFixed(3)).join(', ')}`,
  );
  printReplayFloor(rounds, results);

  // Where the machine's CPU goes per message, and the cores each side kept busy: a phase whose
  // machine, or whose router event loop, is full cannot go faster; the ceiling's total over the
  // phase's is what the ratio would read were both CPU-bound.
  const cpuText = (cpu: CpuPerMessage | null) =>
    cpu
      ? `total ${cpu.total ?? 'n/a'} (server ${cpu.server ?? 'n/a'}, its main thread ${cpu.serverMainThread ?? 'n/a'}; ` +
        `nats-server ${cpu.natsServer ?? 'n/a'}; bench ${cpu.bench})`
      : 'n/a';
  const boundOf = (ceilingCpu: CpuPerMessage | null, phaseCpu: CpuPerMessage | null | undefined) =>
    ceilingCpu?.total && phaseCpu?.total ? round(ceilingCpu.total / phaseCpu.total, 3).toFixed(3) : 'n/a';
  // Cores busy = CPU per message × messages/s: whether the machine, or the router's one event loop, is full.
  const busy = (cpuMicros: number | null | undefined, messagesPerSecond: number | undefined) =>
    cpuMicros == null || messagesPerSecond === undefined
      ? 'n/a'
      : round((cpuMicros * messagesPerSecond) / 1e6, 2).toFixed(2);
  console.log(
    `CPU µs per message, median rounds: ceiling ${cpuText(deliveryMedian.cpu.ceiling)} (bench: its client thread ` +
      `and the receiver); delivery ${cpuText(deliveryMedian.cpu.delivery)} (bench: the receiver and the ` +
      `/v1/batch load); replay ${cpuText(replayMedian?.cpu.replay ?? null)} (bench: the receiver)`,
  );
  const replayCpu = replayMedian?.cpu.replay;
  console.log(
    `cores busy of ${cpus().length}: ceiling ${busy(deliveryMedian.cpu.ceiling?.total, deliveryMedian.ceiling.messagesPerSecond)}; ` +
      `delivery ${busy(deliveryMedian.cpu.delivery?.total, deliveryMedian.delivery.messagesPerSecond)} (the server's ` +
      `main thread ${busy(deliveryMedian.cpu.delivery?.serverMainThread, deliveryMedian.delivery.messagesPerSecond)}); ` +
      `replay ${busy(replayCpu?.total, replayMedian?.replay?.messagesPerSecond)} (the server's main thread ` +
      `${busy(replayCpu?.serverMainThread, replayMedian?.replay?.messagesPerSecond)}); the ceiling's CPU per message ` +
      `over the phase's (the ratio were both CPU-bound): delivery ` +
      `${boundOf(deliveryMedian.cpu.ceiling, deliveryMedian.cpu.delivery)}, replay ` +
      `${boundOf(replayMedian?.cpu.ceiling ?? null, replayCpu)}`,
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

  failures.push(...(await postgresPhase(run)));
  return failures;
}

/** The PostgreSQL phase; returns what went wrong (messages not stored in time). */
export async function postgresPhase(run: BenchRun): Promise<string[]> {
  const { server, api, settings, results, workspace: WORKSPACE } = run;
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
          `ratio ${figures.ratio.toFixed(3)}` +
          (figures.floor
            ? `; floor ${figures.floor.rowsPerSecond.toLocaleString('en-US')} rows/s, ratio ${figures.floor.ratio.toFixed(3)}`
            : ''),
      ),
    floor: { natsUrl: run.natsUrl, natsPid: run.natsPid },
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
    printPostgresFloor(postgres.rounds, results);
  }
  return typeof postgres === 'string' ? [] : postgres.failures;
}
