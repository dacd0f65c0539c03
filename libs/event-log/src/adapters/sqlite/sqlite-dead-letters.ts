import type { Database, Statement } from '@tributary/sqlite';
import { assertConsumerName, assertPositiveInteger } from '../../event-log.validation';
import type {
  DeadLetter,
  DeadLetterOutcome,
  ListDeadLettersOptions,
  NewDeadLetter,
} from '../../ports/dead-letters.port';
import type { DeadLetterRow } from './sqlite-event-log.schema';
import type { EnqueueWrite } from './sqlite-write.batcher';

const DEFAULT_DEAD_LETTER_PAGE = 100;

/** Dead letters in the embedded log's file (table `dead_letters`), one per consumer and message. */
export class SqliteDeadLetters {
  private readonly statements: {
    selectOf: Statement;
    insert: Statement;
    list: Statement;
    listOf: Statement;
    deleteBefore: Statement;
  };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    private readonly assertOpen: () => void,
  ) {
    this.statements = {
      selectOf: database.prepare(
        'SELECT dead_letter_sequence FROM dead_letters WHERE consumer_name = ? AND sequence = ?',
      ),
      insert: database.prepare(
        `INSERT INTO dead_letters (consumer_name, sequence, workspace_id, source_id, message_id, published_at, payload,
         reason, attempts, dead_lettered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      list: database.prepare(
        'SELECT * FROM dead_letters WHERE dead_letter_sequence > ? ORDER BY dead_letter_sequence LIMIT ?',
      ),
      listOf: database.prepare(
        'SELECT * FROM dead_letters WHERE consumer_name = ? AND dead_letter_sequence > ? ORDER BY dead_letter_sequence LIMIT ?',
      ),
      deleteBefore: database.prepare('DELETE FROM dead_letters WHERE dead_lettered_at < ?'),
    };
  }

  async deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    assertConsumerName(letter.consumerName);
    const { message } = letter;
    const payload = JSON.stringify(message.payload);
    const attempts = JSON.stringify(
      letter.attempts.map((attempt) => ({ at: attempt.at.toISOString(), outcome: attempt.outcome })),
    );
    return this.enqueueWrite((now): DeadLetterOutcome => {
      const existing = this.statements.selectOf.get(letter.consumerName, message.sequence) as
        { dead_letter_sequence: number } | undefined;
      if (existing) return { deadLetterSequence: existing.dead_letter_sequence, duplicate: true };
      const inserted = this.statements.insert.run(
        letter.consumerName,
        message.sequence,
        message.workspaceId,
        message.sourceId,
        message.messageId,
        message.publishedAt.getTime(),
        payload,
        letter.reason,
        attempts,
        now,
      );
      return { deadLetterSequence: Number(inserted.lastInsertRowid), duplicate: false };
    });
  }

  list(options: ListDeadLettersOptions): DeadLetter[] {
    this.assertOpen();
    const after = options.afterSequence ?? 0;
    const limit = options.limit ?? DEFAULT_DEAD_LETTER_PAGE;
    assertPositiveInteger('limit', limit);
    const rows = (
      options.consumerName === undefined
        ? this.statements.list.all(after, limit)
        : this.statements.listOf.all(options.consumerName, after, limit)
    ) as DeadLetterRow[];
    return rows.map(toDeadLetter);
  }

  /** Inside a write: drops the dead letters older than the retention. */
  deleteBefore(cutoff: number): void {
    this.statements.deleteBefore.run(cutoff);
  }
}

function toDeadLetter(row: DeadLetterRow): DeadLetter {
  const attempts = JSON.parse(row.attempts) as { at: string; outcome: string }[];
  return {
    deadLetterSequence: row.dead_letter_sequence,
    deadLetteredAt: new Date(row.dead_lettered_at),
    consumerName: row.consumer_name,
    reason: row.reason,
    attempts: attempts.map((attempt) => ({ at: new Date(attempt.at), outcome: attempt.outcome })),
    message: {
      workspaceId: row.workspace_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      sequence: row.sequence,
      publishedAt: new Date(row.published_at),
      payload: JSON.parse(row.payload) as Record<string, unknown>,
    },
  };
}
