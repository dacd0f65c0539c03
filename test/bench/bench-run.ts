/**
 * What every phase of `npm run bench` shares: the settings read from the environment (documented in
 * ingest.bench.ts's header), and the run: the server, the Config API client, the workspace, the results
 * and the clean-up steps.
 */
import type { ConfigApiClient } from '../support/config-api.client';
import type { TributaryServerProcess } from './tributary-server.process';

export const PHASE_GROUPS = [
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
export type PhaseGroup = (typeof PHASE_GROUPS)[number];

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
export function durationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (!match) throw new Error(`BENCH_DEDUPE_GUARD_WINDOW: "${text}" is not a duration such as 10s`);
  return Number(match[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms'];
}

export function numberSetting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${text}"`);
  return value;
}

/** The bench's settings, from the environment; throws on a value it cannot use. */
export function readSettings() {
  return {
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
}

export type BenchSettings = ReturnType<typeof readSettings>;

/** One run of the bench, as its phases see it. */
export interface BenchRun {
  server: TributaryServerProcess;
  /** The run's nats-server, for its CPU time. */
  natsPid: number;
  /** The same nats-server, for what the bench reads from it itself (the replay floor). */
  natsUrl: string;
  api: ConfigApiClient;
  settings: BenchSettings;
  /** The workspace the phases create their sources in. */
  workspace: string;
  /** What `.bench/results.json` holds: each phase adds its figures. */
  results: Record<string, unknown>;
  /** Everything to undo, run in reverse order on success, failure and Ctrl-C alike. */
  cleanups: Array<() => Promise<void> | void>;
}
