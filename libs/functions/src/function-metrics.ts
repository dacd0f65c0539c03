import type { FunctionKind } from './function-runner.port';

/**
 * What became of one invocation, as the metrics count it (specs/functions.md §7): `success` (the
 * message or request was handled), `filtered` (an insert function dropped the message), `discarded`
 * (a function's error that retrying cannot fix), `retried` (a `RetryError`, an unavailable runner),
 * `timeout` and `memory_exceeded` (the §6 limits).
 */
export const FUNCTION_OUTCOMES = [
  'success',
  'filtered',
  'discarded',
  'retried',
  'timeout',
  'memory_exceeded',
] as const;
export type FunctionOutcome = (typeof FUNCTION_OUTCOMES)[number];

export const FUNCTION_KINDS: readonly FunctionKind[] = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'];

/** Durations kept per function for its percentiles: the most recent invocations, memory bounded. */
export const FUNCTION_DURATION_SAMPLES = 1024;

/** The §7 metrics of one function, as the `metrics` route answers them. */
export interface FunctionMetricsSnapshot {
  invocations: number;
  outcomes: Record<FunctionOutcome, number>;
  /** Over the last `FUNCTION_DURATION_SAMPLES` invocations; null before the first. */
  duration_ms: { p50: number | null; p95: number | null };
  cpu_ms_total: number;
}

/** Told of every invocation recorded, with no function id (the Prometheus series carry none). */
export type FunctionInvocationListener = (
  kind: FunctionKind,
  outcome: FunctionOutcome,
  durationMs: number,
) => void;

const zeroOutcomes = (): Record<FunctionOutcome, number> =>
  Object.fromEntries(FUNCTION_OUTCOMES.map((outcome) => [outcome, 0])) as Record<FunctionOutcome, number>;

/** Nearest rank over values sorted ascending. */
function percentileOf(sorted: Float64Array, p: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : null;
}

class FunctionStats {
  invocations = 0;
  readonly outcomes = zeroOutcomes();
  cpuMsTotal = 0;
  /** A ring of the most recent durations: `next` is where the next one goes once it is full. */
  private readonly durations: number[] = [];
  private next = 0;

  addDuration(durationMs: number): void {
    if (this.durations.length < FUNCTION_DURATION_SAMPLES) this.durations.push(durationMs);
    else this.durations[this.next] = durationMs;
    this.next = (this.next + 1) % FUNCTION_DURATION_SAMPLES;
  }

  /** Sorted ascending in a typed array: sorted natively, without a comparator call per comparison. */
  sortedDurations(): Float64Array {
    return Float64Array.from(this.durations).sort();
  }
}

/**
 * Invocation counts and durations of tenant functions since the process started, in memory: one
 * instance per process (the apps provide it as a singleton), written on every invocation (a few
 * additions, no I/O) and read by the `metrics` route and the Prometheus collector.
 */
export class FunctionMetrics {
  private readonly byFunction = new Map<string, FunctionStats>();
  private readonly byKind = new Map<FunctionKind, Record<FunctionOutcome, number>>(
    FUNCTION_KINDS.map((kind) => [kind, zeroOutcomes()]),
  );
  private readonly listeners = new Set<FunctionInvocationListener>();

  /**
   * Counts one invocation. A duration that is not a finite, non-negative number (a clock that went
   * back) counts the invocation without sampling it; `cpuMs` adds to `cpu_ms_total` when the runner
   * measured it.
   */
  record(
    workspaceId: string,
    functionId: string,
    kind: FunctionKind,
    outcome: FunctionOutcome,
    durationMs: number,
    cpuMs = 0,
  ): void {
    const byKind = this.byKind.get(kind);
    if (!byKind || !Object.hasOwn(byKind, outcome)) {
      throw new TypeError(`unknown function kind or outcome: ${String(kind)}, ${String(outcome)}`);
    }
    const key = keyOf(workspaceId, functionId);
    let stats = this.byFunction.get(key);
    if (!stats) {
      stats = new FunctionStats();
      this.byFunction.set(key, stats);
    }
    stats.invocations += 1;
    stats.outcomes[outcome] += 1;
    byKind[outcome] += 1;
    if (Number.isFinite(cpuMs) && cpuMs > 0) stats.cpuMsTotal += cpuMs;
    const sampled = Number.isFinite(durationMs) && durationMs >= 0;
    if (sampled) stats.addDuration(durationMs);
    for (const listener of this.listeners) listener(kind, outcome, sampled ? durationMs : 0);
  }

  /** The function's metrics; all zero (percentiles null) for one that never ran in this process. */
  snapshot(workspaceId: string, functionId: string): FunctionMetricsSnapshot {
    const stats = this.byFunction.get(keyOf(workspaceId, functionId));
    if (!stats) {
      return {
        invocations: 0,
        outcomes: zeroOutcomes(),
        duration_ms: { p50: null, p95: null },
        cpu_ms_total: 0,
      };
    }
    const sorted = stats.sortedDurations();
    return {
      invocations: stats.invocations,
      outcomes: { ...stats.outcomes },
      duration_ms: { p50: percentileOf(sorted, 0.5), p95: percentileOf(sorted, 0.95) },
      cpu_ms_total: stats.cpuMsTotal,
    };
  }

  /** Counts by kind and outcome over every function: what Prometheus exports. */
  totalsByKind(): ReadonlyMap<FunctionKind, Readonly<Record<FunctionOutcome, number>>> {
    return this.byKind;
  }

  /** Drops what is kept of a deleted function (the totals by kind keep its counts). */
  forget(workspaceId: string, functionId: string): void {
    this.byFunction.delete(keyOf(workspaceId, functionId));
  }

  /** Calls `listener` on every invocation recorded from now on; returns how to stop. */
  onInvocation(listener: FunctionInvocationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Ids are subject tokens (no whitespace): a line break cannot occur in either. */
function keyOf(workspaceId: string, functionId: string): string {
  return `${workspaceId}\n${functionId}`;
}
