import type { Database, Statement } from '@tributary/sqlite';
import type { ErasedMessages, MessagesToErase } from '../../event-log.port';

/**
 * A regulation's erasure in the embedded log's file (docs/regulations.md §4): the subjects' rows of
 * `messages`, `dead_letters` and `protocols_outcomes` (whose sample is the message as it came in) and
 * the failed-attempt histories of the erased messages, in one write transaction. The `dedupe` table
 * keeps the ids, which hold nothing of the user. Ids and sources are bound as JSON arrays, so 5,000
 * subjects make one statement each, not 5,000.
 */
export class SqliteErasure {
  private readonly statements: Record<
    | 'selectMessages'
    | 'deleteMessages'
    | 'deleteAttempts'
    | 'selectDeadLetters'
    | 'deleteDeadLetters'
    | 'deleteOutcomes',
    Statement
  >;

  constructor(database: Database) {
    // Source ids and subject ids are JSON arrays; `sources` is null for every source of the workspace.
    const inScope = `workspace_id = @workspace AND (@sources IS NULL OR source_id IN (SELECT value FROM json_each(@sources)))`;
    const isSubject = (column: string, prefix = '$.') =>
      `json_extract(${column}, '${prefix}' || @field) IN (SELECT value FROM json_each(@subjects))`;
    this.statements = {
      selectMessages: database.prepare(
        `SELECT sequence, message_id FROM messages WHERE ${inScope} AND ${isSubject('payload')}`,
      ),
      deleteMessages: database.prepare(
        'DELETE FROM messages WHERE sequence IN (SELECT value FROM json_each(?))',
      ),
      deleteAttempts: database.prepare(
        'DELETE FROM failed_attempts WHERE sequence IN (SELECT value FROM json_each(?))',
      ),
      selectDeadLetters: database.prepare(
        `SELECT dead_letter_sequence, sequence FROM dead_letters WHERE ${inScope} AND ${isSubject('payload')}`,
      ),
      deleteDeadLetters: database.prepare(
        'DELETE FROM dead_letters WHERE dead_letter_sequence IN (SELECT value FROM json_each(?))',
      ),
      deleteOutcomes: database.prepare(
        `DELETE FROM protocols_outcomes WHERE ${inScope} AND ${isSubject('outcome', '$.sample.')}`,
      ),
    };
  }

  /** Runs inside the log's write transaction. */
  erase(request: MessagesToErase): ErasedMessages {
    const s = this.statements;
    const scope = {
      workspace: request.workspaceId,
      sources: request.sourceIds ? JSON.stringify(request.sourceIds) : null,
      field: request.field,
      subjects: JSON.stringify(request.subjectIds),
    };
    const rows = s.selectMessages.all(scope) as { sequence: number; message_id: string }[];
    const messages = rows.map((row) => row.sequence);
    const letters = s.selectDeadLetters.all(scope) as { dead_letter_sequence: number; sequence: number }[];
    const sequences = JSON.stringify([...messages, ...letters.map((letter) => letter.sequence)]);
    s.deleteMessages.run(JSON.stringify(messages));
    s.deleteAttempts.run(sequences);
    s.deleteDeadLetters.run(JSON.stringify(letters.map((letter) => letter.dead_letter_sequence)));
    const outcomes = s.deleteOutcomes.run(scope).changes;
    return {
      messages: messages.length,
      messageIds: rows.map((row) => row.message_id),
      deadLetters: letters.length,
      protocolsOutcomes: outcomes,
    };
  }
}
