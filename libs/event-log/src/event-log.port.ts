import type { AttemptHistory } from './ports/attempt-history.port';
import type { DeadLetters } from './ports/dead-letters.port';
import type { FunctionLogStore } from './ports/function-logs.port';
import type { Leases } from './ports/leases.port';
import type { MessageErasure } from './ports/message-erasure.port';
import type { ProtocolsOutcomeStore } from './ports/protocols-outcomes.port';
import type { SeenOnce } from './ports/seen-once.port';
import type { TrackingLog } from './ports/tracking-log.port';

export * from './event-log.errors';
export * from './ports/tracking-log.port';
export * from './ports/dead-letters.port';
export * from './ports/attempt-history.port';
export * from './ports/leases.port';
export * from './ports/seen-once.port';
export * from './ports/message-erasure.port';
export * from './ports/protocols-outcomes.port';
export * from './ports/function-logs.port';

/** How long a `messageId` is remembered for dedupe when `DEDUPE_WINDOW` is not set (docs/tracking-api.md §12.1). */
export const DEFAULT_DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long messages are kept when `RETENTION` is not set; this bounds how far back a replay reaches. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The settings both adapters share. */
export interface EventLogSettings {
  /**
   * How long a `messageId` is remembered. Must not exceed `retentionMs`.
   *
   * Memory cost: JetStream keeps every id of the window in the server's RAM (an entry of id string,
   * sequence and timestamp plus its map slot: about 150 bytes for a 36-character UUID id). Budget
   * `messages per second x window in seconds x 150 B`: 100 msg/s for 24 h is ~1.3 GB, 1,000 msg/s is
   * ~13 GB. The sqlite adapter keeps the ids on disk (about 100 B each with the index), not in RAM.
   */
  dedupeWindowMs: number;
  /** How long a message is kept; older messages are deleted and can no longer be replayed. */
  retentionMs: number;
  /**
   * At most this many `markSeenOnce` keys are remembered at once (default
   * `DEFAULT_SEEN_ONCE_CAPACITY`); past it, `markSeenOnce` refuses with `SeenOnceCapacityError`.
   */
  seenOnceCapacity?: number;
}

/**
 * Everything one engine keeps beside the tracking messages, served from one connection (JetStream)
 * or one file (sqlite). Callers never take the whole of it: each injects the part it uses (the
 * tokens beside each port), so a spec fakes only that part. Only the engines, the module that opens
 * them and the test kits see it whole.
 */
export interface EventLog
  extends
    TrackingLog,
    DeadLetters,
    AttemptHistory,
    Leases,
    SeenOnce,
    MessageErasure,
    ProtocolsOutcomeStore,
    FunctionLogStore {}

/** DI token of the engine's whole log: the one connection every port's token is served from. */
export const EVENT_LOG = Symbol('EventLog');
