import type { BlockedReason, TrackingMessage, Violation } from '../protocols.types';

/**
 * What is recorded, once, for a first-seen message that Protocols blocked or found violations in
 * (docs/protocols.md R13): enough to count per event and field and to show a few samples.
 */
export interface ProtocolsOutcome {
  messageType: string;
  /** `event` of a track, `name` of a page or screen, `""` otherwise. */
  eventName: string;
  blockedReason?: BlockedReason;
  /** At most `MAX_VIOLATIONS_PER_MESSAGE`. */
  violations: Violation[];
  /** How many more the message had; absent when none. */
  violationsTruncated?: number;
  /** The message as it came in, for the samples. */
  sample: TrackingMessage;
}

export interface RecordedOutcome {
  outcome: ProtocolsOutcome;
  recordedAt: Date;
}

export const VIOLATION_WINDOWS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000 } as const;
export type ViolationWindow = keyof typeof VIOLATION_WINDOWS;

/** Sample payloads kept per counted violation. */
export const SAMPLES_PER_VIOLATION = 3;

/**
 * Most outcomes a summary reads: the newest of the window. A source sent thousands of violating
 * messages a minute would otherwise load a week of them (each up to 100 violations and a 32 KB
 * sample) into the Config API's memory for one request.
 */
export const MAX_OUTCOMES_SUMMARIZED = 1_000;

/** Most counted rows a summary answers (the most counted); each row carries up to three samples. */
export const MAX_SUMMARY_ROWS = 200;

export interface ViolationCount {
  message_type: string;
  event_name: string;
  violation_type: string;
  field: string;
  description: string;
  count: number;
  last_seen: string;
  /** The most recent messages that had this violation, newest first. */
  samples: TrackingMessage[];
}

export interface ViolationSummary {
  window: ViolationWindow;
  since: string;
  violations: ViolationCount[];
  blocked: Record<BlockedReason, number>;
  total_violations: number;
  total_blocked: number;
  /** Outcomes counted: the newest `MAX_OUTCOMES_SUMMARIZED` of the window at most. */
  outcomes_counted: number;
  /** True when the window held more outcomes than were read, or more rows than are listed. */
  truncated: boolean;
}

export function outcomeFor(
  message: TrackingMessage,
  violations: readonly Violation[],
  blockedReason: BlockedReason | undefined,
  violationsTruncated = 0,
): ProtocolsOutcome {
  return {
    messageType: message.type,
    eventName: eventNameOf(message),
    ...(blockedReason ? { blockedReason } : {}),
    violations: [...violations],
    ...(violationsTruncated > 0 ? { violationsTruncated } : {}),
    sample: message,
  };
}

export function eventNameOf(message: TrackingMessage): string {
  if (message.type === 'track') return typeof message.event === 'string' ? message.event : '';
  if (message.type === 'page' || message.type === 'screen') {
    return typeof message.name === 'string' ? message.name : '';
  }
  return '';
}

/**
 * Counts per (message type, event, violation type, field, description), the most counted first.
 * `readAll` is false when the read stopped at `MAX_OUTCOMES_SUMMARIZED`.
 */
export function summarizeViolations(
  recorded: Iterable<RecordedOutcome>,
  window: ViolationWindow,
  now: Date,
  readAll = true,
): ViolationSummary {
  const since = new Date(now.getTime() - VIOLATION_WINDOWS[window]);
  const counts = new Map<string, ViolationCount>();
  const blocked: Record<BlockedReason, number> = {
    unplanned: 0,
    schema_violation: 0,
    common_schema_violation: 0,
    unplanned_and_schema_violation: 0,
  };
  let totalViolations = 0;
  let totalBlocked = 0;
  let outcomesCounted = 0;
  for (const { outcome, recordedAt } of recorded) {
    if (recordedAt < since) continue;
    outcomesCounted += 1;
    totalViolations += Number.isInteger(outcome.violationsTruncated) ? outcome.violationsTruncated! : 0;
    if (outcome.blockedReason && outcome.blockedReason in blocked) {
      blocked[outcome.blockedReason] += 1;
      totalBlocked += 1;
    }
    const seen = recordedAt.toISOString();
    for (const violation of outcome.violations) {
      totalViolations += 1;
      const key = JSON.stringify([
        outcome.messageType,
        outcome.eventName,
        violation.type,
        violation.field,
        violation.description,
      ]);
      let count = counts.get(key);
      if (!count) {
        count = {
          message_type: outcome.messageType,
          event_name: outcome.eventName,
          violation_type: violation.type,
          field: violation.field,
          description: violation.description,
          count: 0,
          last_seen: seen,
          samples: [],
        };
        counts.set(key, count);
      }
      count.count += 1;
      if (seen >= count.last_seen) count.last_seen = seen;
      if (!count.samples.includes(outcome.sample)) {
        count.samples.unshift(outcome.sample);
        if (count.samples.length > SAMPLES_PER_VIOLATION) count.samples.pop();
      }
    }
  }
  const violations = [...counts.values()].sort(
    (a, b) => b.count - a.count || a.event_name.localeCompare(b.event_name) || a.field.localeCompare(b.field),
  );
  return {
    window,
    since: since.toISOString(),
    violations: violations.slice(0, MAX_SUMMARY_ROWS),
    blocked,
    total_violations: totalViolations,
    total_blocked: totalBlocked,
    outcomes_counted: outcomesCounted,
    truncated: !readAll || violations.length > MAX_SUMMARY_ROWS,
  };
}
