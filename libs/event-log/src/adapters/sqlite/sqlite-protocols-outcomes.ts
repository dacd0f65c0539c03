import type { Database, Statement } from '@tributary/sqlite';
import {
  PROTOCOLS_OUTCOME_RETENTION_MS,
  type ProtocolsOutcomeToRecord,
  type RecordedProtocolsOutcome,
  type RecordProtocolsOutcome,
} from '../../ports/protocols-outcomes.port';
import { assertSubjectToken } from '../../event-log.validation';
import type { EnqueueWrite } from './sqlite-write.batcher';

/**
 * Protocols outcomes in the embedded log's file. `seen_until` makes the (source, messageId) key a
 * dedupe entry with the log's window: an outcome recorded again after the window is a new one, as a
 * message published again after the window is.
 */
export const SQLITE_PROTOCOLS_OUTCOMES_SCHEMA = `
CREATE TABLE IF NOT EXISTS protocols_outcomes (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id  TEXT    NOT NULL,
  source_id     TEXT    NOT NULL,
  message_id    TEXT    NOT NULL,
  outcome       TEXT    NOT NULL,
  recorded_at   INTEGER NOT NULL,
  seen_until    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS protocols_outcomes_by_source ON protocols_outcomes (source_id, recorded_at);
CREATE INDEX IF NOT EXISTS protocols_outcomes_by_message ON protocols_outcomes (source_id, message_id, seen_until);
CREATE INDEX IF NOT EXISTS protocols_outcomes_by_time ON protocols_outcomes (recorded_at);
`;

interface OutcomeRow {
  workspace_id: string;
  source_id: string;
  message_id: string;
  outcome: string;
  recorded_at: number;
}

export class SqliteProtocolsOutcomes {
  private readonly statements: {
    selectSeen: Statement;
    insert: Statement;
    selectSince: Statement;
    deleteBefore: Statement;
  };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    private readonly dedupeWindowMs: number,
  ) {
    database.exec(SQLITE_PROTOCOLS_OUTCOMES_SCHEMA);
    this.statements = {
      selectSeen: database.prepare(
        'SELECT 1 FROM protocols_outcomes WHERE source_id = ? AND message_id = ? AND seen_until > ? LIMIT 1',
      ),
      insert: database.prepare(
        `INSERT INTO protocols_outcomes (workspace_id, source_id, message_id, outcome, recorded_at, seen_until)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      selectSince: database.prepare(
        `SELECT workspace_id, source_id, message_id, outcome, recorded_at FROM protocols_outcomes
         WHERE source_id = ? AND recorded_at >= ? ORDER BY recorded_at DESC, id DESC LIMIT ?`,
      ),
      deleteBefore: database.prepare(
        'DELETE FROM protocols_outcomes WHERE recorded_at < ? AND seen_until <= ?',
      ),
    };
  }

  record(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]> {
    for (const outcome of outcomes) {
      assertSubjectToken('workspaceId', outcome.workspaceId);
      assertSubjectToken('sourceId', outcome.sourceId);
    }
    const bodies = outcomes.map((outcome) => JSON.stringify(outcome.outcome));
    return this.enqueueWrite((now) =>
      outcomes.map((outcome, index): RecordProtocolsOutcome => {
        if (this.statements.selectSeen.get(outcome.sourceId, outcome.messageId, now))
          return { duplicate: true };
        this.statements.insert.run(
          outcome.workspaceId,
          outcome.sourceId,
          outcome.messageId,
          bodies[index],
          now,
          now + this.dedupeWindowMs,
        );
        return { duplicate: false };
      }),
    );
  }

  read(sourceId: string, since: Date, limit = Number.MAX_SAFE_INTEGER): RecordedProtocolsOutcome[] {
    assertSubjectToken('sourceId', sourceId);
    const from = Math.max(since.getTime(), Date.now() - PROTOCOLS_OUTCOME_RETENTION_MS);
    // Newest first, in the order of the (source_id, recorded_at) index (which ends with the id), so
    // the limit keeps the newest without sorting the window; answered oldest first.
    const rows = (this.statements.selectSince.all(sourceId, from, limit) as OutcomeRow[]).reverse();
    return rows.map((row) => ({
      workspaceId: row.workspace_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      outcome: JSON.parse(row.outcome) as Record<string, unknown>,
      recordedAt: new Date(row.recorded_at),
    }));
  }

  /** Deletes what is past both the counting window and the dedupe window; run by the log's maintenance. */
  deleteExpired(now: number): void {
    this.statements.deleteBefore.run(now - PROTOCOLS_OUTCOME_RETENTION_MS, now);
  }
}
