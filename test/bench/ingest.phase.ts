/**
 * Phases 1 and 2 of `npm run bench` (see ingest.bench.ts's header): the JetStream ceilings and
 * `/v1/batch` alternating for BENCH_ROUNDS rounds, with the `protocols` and `suppression` variants of
 * phase 2 when BENCH_PHASES names them; then the stored-message check of every stream written to.
 */
import { cpus } from 'node:os';
import { DEFAULT_DEDUPE_WINDOW_MS, TRACKING_STREAM } from '@tributary/event-log';
import { BatchPoster } from './batch-poster';
import { createBenchMessages, type BenchMessages } from './bench-messages';
import { createSource } from './bench-resources';
import { durationMs, type BenchRun, type BenchSettings } from './bench-run';
import {
  CEILING_STREAM,
  deleteCeilingStream,
  ensureCeilingStream,
  measureJetStreamCeiling,
  storedCountFailures,
  streamMessageCount,
  type CeilingResult,
} from './jetstream-ceiling.phase';
import { medianBy, round, runClosedLoop, type PhaseResult } from './load-loop';
import { printTable } from './print-table';
import { assertBenchMessagesFitPlan, assertPlanEnforced, createPlannedSource } from './protocols.phase';
import { assertSuppressionInForce, createSuppressingSource } from './suppression.phase';
import { cpuMsPerThousand, processCpuTimeMs, TributaryServerProcess } from './tributary-server.process';

const GOAL_RATIO = 0.8;
const GOAL_P99_MS = 50;
/** Goal of `ratio suppression/ingest`: checking 10,000 suppressed users costs ingest at most 3 %. */
const SUPPRESSION_GOAL_RATIO = 0.97;
/** Goal of `ratio protocols/ingest`: enforcing a realistic plan keeps at least this share of the rate. */
const PROTOCOLS_GOAL_RATIO = 0.8;
/** The floor's subject, in the ceiling's stream (`bench-ceiling.>`). */
const FLOOR_SUBJECT = 'bench-ceiling.floor';

export type TributaryResult = PhaseResult & {
  peakRssMb: number | null;
  peakRssDuringPhaseMb: number | null;
  cpuMsPerThousandMessages: number | null;
  /** nats-server's and the load generator's (the bench process's) CPU per 1,000 messages; null off Linux. */
  natsCpuMsPerThousandMessages: number | null;
  loadCpuMsPerThousandMessages: number;
  /** Messages the server answered as stored, warm-up included (checked against TRACKING afterwards). */
  storedMessages: number;
  /** Messages in requests that failed: they may or may not be stored. */
  messagesOfFailedRequests: number;
};

/**
 * Runs phases 1 and 2 and puts their figures in `run.results`. Returns phase 2's median round, which
 * the delivery phases take their ratios to, and what went wrong (messages lost or duplicated).
 */
export async function measureIngest(
  run: BenchRun,
  natsUrl: string,
): Promise<{ tributary: TributaryResult; failures: string[] }> {
  const { server, api, settings, results, workspace: WORKSPACE } = run;
  const runs = (phase: 'protocols' | 'suppression') => settings.phases.includes(phase);
  const failures: string[] = [];
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
  await ensureCeilingStream(
    natsUrl,
    settings.dedupeIndex === 'on' ? durationMs(settings.dedupeGuardWindow) : DEFAULT_DEDUPE_WINDOW_MS,
  );
  const ceilingStreamBefore = await streamMessageCount(natsUrl, CEILING_STREAM);
  const trackingStreamBefore = await streamMessageCount(natsUrl, TRACKING_STREAM);
  const tributaryRuns: TributaryResult[] = [];
  const ceilingRuns: CeilingResult[] = [];
  // Publishes to the ceiling's stream, so its messages count in that stream's check.
  const floorRuns: TributaryResult[] = [];
  const floor = await TributaryServerProcess.start({
    script: 'test/bench/ingest-floor.server.ts',
    environment: { NATS_URL: natsUrl, SUBJECT: FLOOR_SUBJECT },
  });
  try {
    for (let round_ = 1; round_ <= settings.rounds; round_ += 1) {
      console.log(
        `round ${round_}/${settings.rounds}, phase 1/5: JetStream ceiling (the pipelined publisher, from the bench) ...`,
      );
      const ceilingOfRound = await measureJetStreamCeiling(
        'pipelined',
        natsUrl,
        messages,
        settings,
        run.natsPid,
      );
      ceilingRuns.push(ceilingOfRound);
      console.log(
        `round ${round_}/${settings.rounds}, phase 1c/5: the floor (a bare server that only parses and publishes) ...`,
      );
      const floorOfRound = await measureTributary(floor, run.natsPid, settings, writeKey, messages);
      floorRuns.push(floorOfRound);
      console.log(`round ${round_}/${settings.rounds}, phase 2/5: tributary /v1/batch ...`);
      if (settings.cpuProfile) server.startCpuProfile();
      // The suppression phase runs before phase 2 in even rounds and after it in odd ones, so that
      // whatever a phase leaves behind (a longer log, garbage) does not always fall on the same side.
      const suppressionFirst =
        suppressionWriteKey && suppressionMessages && round_ % 2 === 0
          ? await measureTributary(server, run.natsPid, settings, suppressionWriteKey, suppressionMessages)
          : undefined;
      const tributaryOfRound = await measureTributary(server, run.natsPid, settings, writeKey, messages);
      tributaryRuns.push(tributaryOfRound);
      if (suppressionFirst) tributaryRuns.push(suppressionFirst);
      if (settings.cpuProfile)
        console.log(`server CPU profile (ingest): ${await server.stopCpuProfile(`ingest-${round_}`)}`);
      console.log(
        `round ${round_}/${settings.rounds}, phase 1b/5: JetStream stock client (js.publish per message) ...`,
      );
      const stockClientOfRound = await measureJetStreamCeiling(
        'stock-client',
        natsUrl,
        messages,
        settings,
        run.natsPid,
      );
      ceilingRuns.push(stockClientOfRound);
      const ratioOfRound = round(tributaryOfRound.messagesPerSecond / ceilingOfRound.messagesPerSecond, 3);
      const stockClientRatioOfRound = round(
        tributaryOfRound.messagesPerSecond / stockClientOfRound.messagesPerSecond,
        3,
      );
      const floorRatioOfRound = round(floorOfRound.messagesPerSecond / ceilingOfRound.messagesPerSecond, 3);
      const toFloorOfRound = round(tributaryOfRound.messagesPerSecond / floorOfRound.messagesPerSecond, 3);
      console.log(
        `round ${round_}/${settings.rounds}: ratio ${ratioOfRound.toFixed(3)}, to the stock client ${stockClientRatioOfRound.toFixed(3)}, ` +
          `floor/ceiling ${floorRatioOfRound.toFixed(3)}, tributary/floor ${toFloorOfRound.toFixed(3)}`,
      );
      rounds.push({
        ceiling: ceilingOfRound,
        stockClient: stockClientOfRound,
        floor: floorOfRound,
        tributary: tributaryOfRound,
        ratio: ratioOfRound,
        stockClientRatio: stockClientRatioOfRound,
        floorRatio: floorRatioOfRound,
        toFloorRatio: toFloorOfRound,
      });
      // A variant of phase 2 against phase 2 of the same round, printed as it is measured.
      const toIngest = (variant: string, measured: { messagesPerSecond: number }) => {
        const ratio = round(measured.messagesPerSecond / tributaryOfRound.messagesPerSecond, 3);
        console.log(`round ${round_}/${settings.rounds}: ratio ${variant}/ingest ${ratio.toFixed(3)}`);
        return ratio;
      };
      if (protocolsWriteKey && protocolsMessages) {
        console.log(
          `round ${round_}/${settings.rounds}, phase 2b/5: tributary /v1/batch with a tracking plan ...`,
        );
        const protocolsOfRound = await measureTributary(
          server,
          run.natsPid,
          settings,
          protocolsWriteKey,
          protocolsMessages,
        );
        tributaryRuns.push(protocolsOfRound);
        protocolsRounds.push({
          protocols: protocolsOfRound,
          ingest: tributaryOfRound,
          ratio: toIngest('protocols', protocolsOfRound),
        });
      }
      if (suppressionWriteKey && suppressionMessages) {
        console.log(
          `round ${round_}/${settings.rounds}, phase 2c/5: tributary /v1/batch to a source suppressing ${suppressedUsers} users ...`,
        );
        let suppressionOfRound = suppressionFirst;
        if (!suppressionOfRound) {
          suppressionOfRound = await measureTributary(
            server,
            run.natsPid,
            settings,
            suppressionWriteKey,
            suppressionMessages,
          );
          tributaryRuns.push(suppressionOfRound);
        }
        suppressionRounds.push({
          suppression: suppressionOfRound,
          ingest: tributaryOfRound,
          ratio: toIngest('suppression', suppressionOfRound),
        });
      }
    }
  } finally {
    await floor.stop();
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
  const ceilingTotals = sum([...ceilingRuns, ...floorRuns]);
  const tributaryTotals = sum(tributaryRuns);
  const duplicateAcks = ceilingRuns.reduce((total, run) => total + run.duplicateAcks, 0);
  const ingestFailures = [
    ...storedCountFailures(
      'JetStream ceilings',
      (await streamMessageCount(natsUrl, CEILING_STREAM)) - ceilingStreamBefore,
      ceilingTotals.stored,
      ceilingTotals.failed,
    ),
    ...storedCountFailures(
      'tributary /v1/batch',
      (await streamMessageCount(natsUrl, TRACKING_STREAM)) - trackingStreamBefore,
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
  await deleteCeilingStream(natsUrl);
  failures.push(...ingestFailures);

  const median = medianBy(rounds, (entry) => entry.ratio);
  const { ceiling, ratio } = median;
  const tributary = median.tributary;
  const stockMedian = medianBy(rounds, (entry) => entry.stockClientRatio);
  const goalMet = ratio >= GOAL_RATIO && tributary.latencyMs.p99 < GOAL_P99_MS;
  console.log(
    `ratios by round: ${rounds.map((entry) => entry.ratio.toFixed(3)).join(', ')} ` +
      `(to the stock client: ${rounds.map((entry) => entry.stockClientRatio.toFixed(3)).join(', ')}); ` +
      'the table shows the median round',
  );
  printIngestTable(tributary, ceiling, stockMedian.stockClient, ratio, goalMet);
  const cpuShares = printCpuShares(tributary, ceiling);
  const floorMedian = printFloor(rounds);
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
    floor: floorMedian,
    cpuShares,
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
  return { tributary, failures };
}

async function measureTributary(
  server: TributaryServerProcess,
  natsPid: number,
  settings: BenchSettings,
  writeKey: string,
  messages: BenchMessages,
): Promise<TributaryResult> {
  const poster = new BatchPoster(server.baseUrl, writeKey, settings.concurrency);

  let peakRss = 0;
  const sample = () => (peakRss = Math.max(peakRss, server.memory()?.rssBytes ?? 0));
  const sampler = setInterval(sample, 100);
  const cpuBefore = server.cpuTimeMs();
  const natsCpuBefore = processCpuTimeMs(natsPid);
  const loadCpuBefore = process.cpuUsage();
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
    const natsCpuAfter = processCpuTimeMs(natsPid);
    const loadCpu = process.cpuUsage(loadCpuBefore);
    const memory = server.memory();
    const totalMessages =
      result.acceptedMessages * ((settings.seconds + settings.warmupSeconds) / settings.seconds);
    return {
      ...result,
      storedMessages,
      messagesOfFailedRequests,
      peakRssMb: memory ? megabytes(memory.peakRssBytes) : null,
      peakRssDuringPhaseMb: peakRss > 0 ? megabytes(peakRss) : null,
      cpuMsPerThousandMessages: cpuMsPerThousand(cpuBefore, cpuAfter, totalMessages),
      natsCpuMsPerThousandMessages: cpuMsPerThousand(natsCpuBefore, natsCpuAfter, totalMessages),
      loadCpuMsPerThousandMessages: round(((loadCpu.user + loadCpu.system) / 1000 / totalMessages) * 1000, 2),
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
  /** The bare server that only parses and publishes (`ingest-floor.server.ts`). */
  floor: TributaryResult;
  tributary: TributaryResult;
  ratio: number;
  stockClientRatio: number;
  /** floor over ceiling: what `ratio tributary/ceiling` could read were Tributary's own work free. */
  floorRatio: number;
  /** tributary over floor. */
  toFloorRatio: number;
}

/**
 * The floor's lines, from the median round by `floor/ceiling`. No goal: it says how much of the
 * ceiling a server keeps that does nothing but take the HTTP requests, parse their JSON and publish,
 * which bounds `ratio tributary/ceiling` on the machine, and how much of that Tributary keeps.
 */
function printFloor(rounds: readonly IngestRound[]): {
  messagesPerSecond: number;
  cpuMsPerThousandMessages: number | null;
  natsCpuMsPerThousandMessages: number | null;
  loadCpuMsPerThousandMessages: number;
  floorRatio: number;
  toFloorRatio: number;
} {
  const median = medianBy(rounds, (entry) => entry.floorRatio);
  const { floor } = median;
  const toFloor = medianBy(rounds, (entry) => entry.toFloorRatio);
  console.log(
    `ratio floor/ceiling: ${median.floorRatio.toFixed(3)}  (no goal: a bare node:http server that only ` +
      `parses each batch and publishes it, ${floor.messagesPerSecond.toLocaleString('en-US')} messages/s, ` +
      `p99 ${floor.latencyMs.p99} ms; CPU ms per 1,000 messages: server ${floor.cpuMsPerThousandMessages ?? 'n/a'}, ` +
      `nats-server ${floor.natsCpuMsPerThousandMessages ?? 'n/a'}, load generator ${floor.loadCpuMsPerThousandMessages}; ` +
      `by round: ${rounds.map((entry) => entry.floorRatio.toFixed(3)).join(', ')})`,
  );
  console.log(
    `ratio tributary/floor: ${toFloor.toFloorRatio.toFixed(3)}  (no goal: by round ` +
      `${rounds.map((entry) => entry.toFloorRatio.toFixed(3)).join(', ')})`,
  );
  return {
    messagesPerSecond: floor.messagesPerSecond,
    cpuMsPerThousandMessages: floor.cpuMsPerThousandMessages,
    natsCpuMsPerThousandMessages: floor.natsCpuMsPerThousandMessages,
    loadCpuMsPerThousandMessages: floor.loadCpuMsPerThousandMessages,
    floorRatio: median.floorRatio,
    toFloorRatio: toFloor.toFloorRatio,
  };
}

function printIngestTable(
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
  printTable(rows);
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

/**
 * Where each phase's CPU goes, per 1,000 messages, and how many cores it kept busy. The ratio of the two
 * phases' CPU per message is what tributary/ceiling would read were both held by the machine's CPU
 * (nats-server spends about as much per message in both; phase 2 adds the server and the HTTP load
 * generator). With 4 requests of 100 at once neither phase fills 2 cores (2026-11-28: the ceiling
 * ~1.0, /v1/batch ~1.4): each is held by its batches' round trips, so the ratio is the ceiling's
 * round trip over /v1/batch's, of which the server's CPU per batch is the largest part. Null off Linux.
 */
function printCpuShares(
  tributary: TributaryResult,
  ceiling: CeilingResult,
): {
  ceilingCpuMs: number;
  tributaryCpuMs: number;
  cpuRatio: number;
  ceilingCores: number;
  tributaryCores: number;
} | null {
  if (tributary.cpuMsPerThousandMessages === null) return null;
  if (tributary.natsCpuMsPerThousandMessages === null || ceiling.natsCpuMsPerThousandMessages === null)
    return null;
  const ceilingCpuMs = round(ceiling.natsCpuMsPerThousandMessages + ceiling.cpuMsPerThousandMessages, 2);
  const tributaryCpuMs = round(
    tributary.natsCpuMsPerThousandMessages +
      tributary.cpuMsPerThousandMessages +
      tributary.loadCpuMsPerThousandMessages,
    2,
  );
  const cpuRatio = round(ceilingCpuMs / tributaryCpuMs, 3);
  // ms of CPU per 1,000 messages × messages/s = ms of CPU per s, over 1,000 = cores.
  const ceilingCores = round((ceilingCpuMs * ceiling.messagesPerSecond) / 1e6, 2);
  const tributaryCores = round((tributaryCpuMs * tributary.messagesPerSecond) / 1e6, 2);
  console.log(
    `CPU ms per 1,000 messages, median round: ceiling ${ceilingCpuMs} (nats-server ` +
      `${ceiling.natsCpuMsPerThousandMessages}, publisher ${ceiling.cpuMsPerThousandMessages}; ${ceilingCores} ` +
      `of ${cpus().length} cores busy); /v1/batch ${tributaryCpuMs} (nats-server ${tributary.natsCpuMsPerThousandMessages}, ` +
      `server ${tributary.cpuMsPerThousandMessages}, load generator ${tributary.loadCpuMsPerThousandMessages}; ` +
      `${tributaryCores} cores busy); ceiling over /v1/batch: ${cpuRatio.toFixed(3)} (what the ratio would read were both CPU-bound)`,
  );
  return { ceilingCpuMs, tributaryCpuMs, cpuRatio, ceilingCores, tributaryCores };
}

function megabytes(bytes: number): number {
  return round(bytes / (1024 * 1024), 1);
}
