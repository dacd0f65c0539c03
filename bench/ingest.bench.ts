/**
 * `npm run bench`: how close `/v1/batch` comes to publishing straight to JetStream.
 *
 * One run, one nats-server, two phases with the same messages, batch size, concurrency and duration:
 * 1. ceiling: the stored JSON of every message published straight to JetStream with `Nats-Msg-Id` by
 *    the same client library Tributary uses (@nats-io/jetstream), all publishes of a batch in flight;
 * 2. tributary: the same messages as analytics-node sends them, POSTed to `/v1/batch` of a Tributary
 *    server (its real entry point, in a child process) over keep-alive HTTP connections.
 * It prints messages/s, latency and peak RSS of both and the ratio, and writes `.bench/ingest.json`.
 *
 * Settings (environment): BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONCURRENCY (4),
 * BENCH_BATCH_SIZE (100), BENCH_CPU_PROFILE=1 writes a CPU profile of the server to `.bench/`
 * (summarize it with `node bench/summarize-cpu-profile.js <file>`), BENCH_SERVER_NODE_OPTIONS.
 */
import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { generateAccessTokenSecret } from '@tributary/auth';
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, NatsServerProcess } from '@tributary/event-log';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBenchMessages, type BenchMessages } from './bench-messages';
import { round, runClosedLoop, type PhaseResult } from './load-loop';
import { TributaryServerProcess } from './tributary-server.process';

const GOAL_RATIO = 0.8;
const GOAL_P99_MS = 50;
/** Same as the JetStream adapter's default publish timeout. */
const PUBLISH_TIMEOUT_MS = 2000;

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
  concurrency: Math.round(numberSetting('BENCH_CONCURRENCY', 4)),
  batchSize: Math.round(numberSetting('BENCH_BATCH_SIZE', 100)),
  cpuProfile: process.env.BENCH_CPU_PROFILE === '1',
  /** Node flags for the server only, to try runtime tuning: `--max-semi-space-size=32`. */
  serverNodeOptions: (process.env.BENCH_SERVER_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean),
};

const repositoryRoot = join(__dirname, '..');
const resultsDirectory = join(repositoryRoot, '.bench');

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
      DATA_DIR: dataDirectory,
      NATS_URL: nats.url,
      TRIBUTARY_BOOTSTRAP_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      // The bench measures throughput, not the limiter.
      TRACKING_RATE_LIMIT: '',
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

  const writeKey = await createSource(server.baseUrl, adminToken);
  const messages = createBenchMessages(writeKey);

  console.log(
    `ingest bench: ${settings.seconds} s per phase after ${settings.warmupSeconds} s warm-up, ` +
      `${settings.concurrency} concurrent clients, ${settings.batchSize}-message batches, ` +
      `messages ${messages.sentBytes.min}-${messages.sentBytes.max} B as sent (average ${messages.sentBytes.average} B), ` +
      `${messages.storedBytes.min}-${messages.storedBytes.max} B as stored (average ${messages.storedBytes.average} B)`,
  );

  console.log('phase 1/2: JetStream ceiling ...');
  const ceiling = await measureCeiling(nats.url, messages);
  console.log('phase 2/2: tributary /v1/batch ...');
  if (settings.cpuProfile) server.startCpuProfile();
  const tributary = await measureTributary(server, writeKey, messages);
  if (settings.cpuProfile) console.log(`server CPU profile: ${await server.stopCpuProfile()}`);

  const ratio = round(tributary.messagesPerSecond / ceiling.messagesPerSecond, 3);
  const goalMet = ratio >= GOAL_RATIO && tributary.latencyMs.p99 < GOAL_P99_MS;
  printTable(tributary, ceiling, ratio, goalMet);

  const results = {
    finishedAt: new Date().toISOString(),
    settings,
    machine: {
      node: process.version,
      natsServer: natsServerVersion(nats.binary),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
    },
    messages: {
      templates: messages.templateCount,
      sentBytes: messages.sentBytes,
      storedBytes: messages.storedBytes,
    },
    tributary,
    ceiling,
    ratio,
    goal: { ratioAtLeast: GOAL_RATIO, p99BelowMs: GOAL_P99_MS, met: goalMet },
  };
  mkdirSync(resultsDirectory, { recursive: true });
  writeFileSync(join(resultsDirectory, 'ingest.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results written to .bench/ingest.json`);
}

/** A workspace and a Node source through the Config API, as an operator would; returns its write key. */
async function createSource(baseUrl: string, adminToken: string): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}/v1beta/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`POST /v1beta/${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  await call('workspaces', { workspace: { name: 'workspaces/bench', display_name: 'Ingest bench' } });
  const source = await call('workspaces/bench/sources', {
    source: { name: 'backend', catalog_name: 'node' },
  });
  return source.write_keys[0];
}

type TributaryResult = PhaseResult & {
  peakRssMb: number | null;
  peakRssDuringPhaseMb: number | null;
  cpuMsPerThousandMessages: number | null;
};
type CeilingResult = PhaseResult & {
  peakRssDuringPhaseMb: number;
  cpuMsPerThousandMessages: number;
};

async function measureCeiling(natsUrl: string, messages: BenchMessages): Promise<CeilingResult> {
  const connection = await connect({
    servers: natsUrl,
    name: 'tributary-bench-ceiling',
    // The library's fastest setting: no stack captured per request for error context (two Error
    // objects per publish otherwise). A ceiling is the best the library can do, whatever Tributary uses.
    noAsyncTraces: true,
  });
  try {
    // A stream of its own (so dedupe never meets Tributary's ids), configured like TRACKING.
    const manager = await jetstreamManager(connection);
    await manager.streams.add({
      name: 'BENCH_CEILING',
      subjects: ['bench-ceiling.>'],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: 1,
      max_age: nanos(DEFAULT_RETENTION_MS),
      duplicate_window: nanos(DEFAULT_DEDUPE_WINDOW_MS),
    });
    const client = jetstream(connection);
    const subject = 'bench-ceiling.ws_bench.src_bench';

    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
    const cpuBefore = process.cpuUsage();
    try {
      const result = await runClosedLoop({
        ...settings,
        send: async () => {
          const { messageIds, payloads } = messages.storedBatch(settings.batchSize);
          const acks = await Promise.all(
            payloads.map((payload, index) =>
              client.publish(subject, payload, { msgID: messageIds[index], timeout: PUBLISH_TIMEOUT_MS }),
            ),
          );
          return acks.filter((ack) => !ack.duplicate).length;
        },
      });
      const cpu = process.cpuUsage(cpuBefore);
      const totalMessages =
        result.acceptedMessages * ((settings.seconds + settings.warmupSeconds) / settings.seconds);
      return {
        ...result,
        peakRssDuringPhaseMb: megabytes(peakRss),
        // Includes the warm-up's share; an estimate of the publisher's cost per message.
        cpuMsPerThousandMessages: round(((cpu.user + cpu.system) / 1000 / totalMessages) * 1000, 2),
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await connection.close();
  }
}

async function measureTributary(
  server: TributaryServerProcess,
  writeKey: string,
  messages: BenchMessages,
): Promise<TributaryResult> {
  const url = new URL('/v1/batch', server.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: settings.concurrency });
  // analytics-node sends the write key both as Basic auth and in the body.
  const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;

  const post = (body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization,
            'user-agent': 'tributary-ingest-bench',
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  let peakRss = 0;
  const sample = () => (peakRss = Math.max(peakRss, server.memory()?.rssBytes ?? 0));
  const sampler = setInterval(sample, 100);
  const cpuBefore = server.cpuTimeMs();
  try {
    const result = await runClosedLoop({
      ...settings,
      send: async () => {
        const { status, text } = await post(messages.batchBody(settings.batchSize));
        if (status !== 200) throw new HttpFailure(status, text);
        // A 200 may still list rejected messages (spec §6.5); those were not stored.
        const rejected = text.includes('"rejected"') ? (JSON.parse(text).rejected?.length ?? 0) : 0;
        return settings.batchSize - rejected;
      },
    });
    const cpuAfter = server.cpuTimeMs();
    const memory = server.memory();
    const totalMessages =
      result.acceptedMessages * ((settings.seconds + settings.warmupSeconds) / settings.seconds);
    return {
      ...result,
      peakRssMb: memory ? megabytes(memory.peakRssBytes) : null,
      peakRssDuringPhaseMb: peakRss > 0 ? megabytes(peakRss) : null,
      cpuMsPerThousandMessages:
        cpuBefore === null || cpuAfter === null
          ? null
          : round(((cpuAfter - cpuBefore) / totalMessages) * 1000, 2),
    };
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
}

class HttpFailure extends Error {
  constructor(status: number, body: string) {
    super(`HTTP ${status} ${body.slice(0, 120)}`);
    this.name = 'HttpFailure';
  }
}

function printTable(
  tributary: TributaryResult,
  ceiling: CeilingResult,
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
    [
      'JetStream ceiling',
      ceiling.messagesPerSecond.toLocaleString('en-US'),
      String(ceiling.latencyMs.p50),
      String(ceiling.latencyMs.p99),
      String(ceiling.latencyMs.max),
      String(ceiling.peakRssDuringPhaseMb),
      String(ceiling.cpuMsPerThousandMessages),
      String(ceiling.failedRequests),
    ],
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
  ] as const) {
    for (const [reason, count] of Object.entries(phase.failures))
      console.log(`${name} failures: ${count} x ${reason}`);
  }
  console.log(
    'peak RSS: tributary = the server process over its whole life (VmHWM); ' +
      'ceiling = the bench process while it publishes (it also holds the HTTP load generator code).',
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
