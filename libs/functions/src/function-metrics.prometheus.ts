import { Counter, Histogram, type Registry } from 'prom-client';
import type { FunctionKind } from './function-runner.port';
import { FUNCTION_OUTCOMES, type FunctionMetrics } from './function-metrics';

/** Seconds: most invocations take a few milliseconds; the wall-time limit is 5 s by default, 60 s at most. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The `kind` label: the function's `type`, lower-case as Prometheus label values usually are. */
export function functionKindLabel(kind: FunctionKind): string {
  return kind.toLowerCase();
}

/**
 * The functions' Prometheus series (specs/functions.md §7), by kind and outcome only: a function id
 * label would make one series per tenant function. Counts are copied from `FunctionMetrics` when
 * Prometheus scrapes; each duration is one histogram observation as it is recorded. Registered once
 * per process, whichever of its surfaces run functions.
 */
export function registerFunctionMetrics(registry: Registry, metrics: FunctionMetrics): void {
  new Counter({
    name: 'tributary_function_invocations_total',
    help:
      'Tenant function invocations since the process started, by kind (source, destination, insert_destination) ' +
      'and outcome (success, filtered, discarded, retried, timeout, memory_exceeded).',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, counts] of metrics.totalsByKind()) {
        for (const outcome of FUNCTION_OUTCOMES)
          this.inc({ kind: functionKindLabel(kind), outcome }, counts[outcome]);
      }
    },
  });
  const duration = new Histogram({
    name: 'tributary_function_duration_seconds',
    help: 'Wall time of tenant function invocations, by kind, whatever their outcome.',
    labelNames: ['kind'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  metrics.onInvocation((kind, _outcome, durationMs) =>
    duration.observe({ kind: functionKindLabel(kind) }, durationMs / 1000),
  );
}
