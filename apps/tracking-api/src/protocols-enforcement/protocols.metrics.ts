import { Injectable } from '@nestjs/common';
import { METRIC_PREFIX, MetricsRegistry } from '@tributary/platform';
import type { CompiledPlan } from '@tributary/protocols';
import { Counter } from 'prom-client';

/**
 * Protocols outcomes as Prometheus counters. Counted once per first-seen message (a retried
 * messageId adds nothing), per process; Prometheus sums the replicas. The per-field detail and the
 * samples are in the violations route, not in labels, to keep the series few.
 */
@Injectable()
export class ProtocolsMetrics {
  private readonly violations: Counter;
  private readonly blocked: Counter;
  private readonly omitted: Counter;
  private readonly forwards: Counter;
  private readonly skippedRules: Counter;

  constructor(registry: MetricsRegistry) {
    this.violations = new Counter({
      name: `${METRIC_PREFIX}protocols_violations_total`,
      help: 'Tracking-plan violations found in first-seen messages, by source and violation type.',
      labelNames: ['source_id', 'violation_type'],
      registers: [registry],
    });
    this.blocked = new Counter({
      name: `${METRIC_PREFIX}protocols_blocked_messages_total`,
      help: 'First-seen messages Protocols kept out of their source log, by source and reason.',
      labelNames: ['source_id', 'reason'],
      registers: [registry],
    });
    this.omitted = new Counter({
      name: `${METRIC_PREFIX}protocols_omitted_fields_total`,
      help: 'Properties or traits Protocols removed from stored messages: unplanned, or on a violation.',
      labelNames: ['source_id', 'why'],
      registers: [registry],
    });
    this.forwards = new Counter({
      name: `${METRIC_PREFIX}protocols_forwards_total`,
      help:
        'Blocked messages and Violation Generated tracks sent to forwarding sources; dropped when the ' +
        'forwarding source does not exist (any more).',
      labelNames: ['source_id', 'kind', 'outcome'],
      registers: [registry],
    });
    this.skippedRules = new Counter({
      name: `${METRIC_PREFIX}protocols_skipped_rules_total`,
      help: 'Rules of stored tracking plans whose JSON Schema did not compile: enforced without them.',
      labelNames: ['plan_id'],
      registers: [registry],
    });
  }

  recordCompiledPlan(plan: CompiledPlan): void {
    if (plan.skipped.length > 0) this.skippedRules.inc({ plan_id: plan.planId }, plan.skipped.length);
  }

  recordViolations(sourceId: string, violations: readonly { type: string }[]): void {
    for (const violation of violations)
      this.violations.inc({ source_id: sourceId, violation_type: violation.type });
  }

  recordBlocked(sourceId: string, reason: string): void {
    this.blocked.inc({ source_id: sourceId, reason });
  }

  recordOmitted(sourceId: string, unplanned: number, onViolation: number): void {
    if (unplanned > 0) this.omitted.inc({ source_id: sourceId, why: 'unplanned' }, unplanned);
    if (onViolation > 0) this.omitted.inc({ source_id: sourceId, why: 'violation' }, onViolation);
  }

  recordForwards(
    sourceId: string,
    kind: 'blocked' | 'violation',
    outcome: 'forwarded' | 'dropped',
    count: number,
  ): void {
    if (count > 0) this.forwards.inc({ source_id: sourceId, kind, outcome }, count);
  }
}
