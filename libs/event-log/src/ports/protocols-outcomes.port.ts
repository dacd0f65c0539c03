/**
 * Protocols outcomes kept beside the messages (docs/protocols.md R13, R14): one record per judged
 * message that was blocked or had violations, written once per (source, messageId) within the dedupe
 * window, read back by time to count violations over the last hour, day or week. Kept in the log's
 * own store so every tracking API replica writes to, and every Config API replica reads, one place.
 */

/** How long outcomes are kept: the widest window the violations route counts over. */
export const PROTOCOLS_OUTCOME_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface ProtocolsOutcomeToRecord {
  workspaceId: string;
  sourceId: string;
  /** The judged message's id: the same (source, messageId) is recorded once in the dedupe window. */
  messageId: string;
  /** What Protocols found (JSON): violations, blocked reason, a sample. */
  outcome: Record<string, unknown>;
}

export interface RecordProtocolsOutcome {
  /** True when this (source, messageId) was already recorded: nothing new was stored, count nothing. */
  duplicate: boolean;
}

export interface RecordedProtocolsOutcome {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  outcome: Record<string, unknown>;
  recordedAt: Date;
}

export interface ProtocolsOutcomeStore {
  /**
   * Stores the outcomes durably, all at once, and answers in input order which were first-seen. A
   * (source, messageId) recorded again inside the dedupe window is a duplicate. Rejects with
   * `EventLogUnavailableError` when the store cannot be reached.
   */
  recordProtocolsOutcomes(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]>;
  /**
   * The source's outcomes recorded at or after `since` (at most the last 7 days), oldest first: the
   * newest `limit` of them when there are more, so that a read holds a bounded number in memory.
   */
  readProtocolsOutcomes(sourceId: string, since: Date, limit?: number): Promise<RecordedProtocolsOutcome[]>;
}

/** DI token of the Protocols outcomes: the process's event log, which keeps them. */
export const PROTOCOLS_OUTCOMES = Symbol('ProtocolsOutcomes');
