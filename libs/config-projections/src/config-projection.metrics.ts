import { Counter, Gauge, Registry } from 'prom-client';
import { ConfigProjectionRunner } from './config-projection.runner';

/**
 * The read model's progress, read on scrape. The event store's port has no cheap "latest position"
 * to subtract from, so the lag shows as events applied and the time of the last one: a projection
 * that stopped while commands still succeed stands out as a flat count and an old timestamp.
 */
export function registerConfigProjectionMetrics(registry: Registry, model: ConfigProjectionRunner): void {
  new Counter({
    name: 'tributary_config_projection_events_applied_total',
    help: 'Config events folded into the read model since the process started.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(model.eventsApplied);
    },
  });
  new Counter({
    name: 'tributary_config_projection_fold_failures_total',
    help:
      'Config events the read model could not fold and skipped (stage="fold"), and listener calls that ' +
      'failed on a folded event (stage="listener"), since the process started. Each is logged.',
    labelNames: ['stage'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ stage: 'fold' }, model.foldFailures.fold);
      this.inc({ stage: 'listener' }, model.foldFailures.listener);
    },
  });
  new Gauge({
    name: 'tributary_config_projection_last_applied_timestamp_seconds',
    help: 'When the read model last folded a config event (Unix time; 0 before the first).',
    registers: [registry],
    collect() {
      this.set(model.lastAppliedAt / 1000);
    },
  });
  new Gauge({
    name: 'tributary_config_projection_position',
    help: 'Position in the config event store of the last event the read model folded (-1 before the first).',
    registers: [registry],
    collect() {
      this.set(Number(model.currentPosition));
    },
  });
}

/** Nest provider token of the registration, for app modules that import `MetricsModule`. */
export const CONFIG_PROJECTION_METRICS = Symbol('ConfigProjectionMetrics');
