import type { Database, Statement } from '@tributary/sqlite';
import { assertValidMessages } from '../../event-log.validation';
import type { MessageToPublish, PublishOutcome } from '../../ports/tracking-log.port';
import type { EnqueueWrite } from './sqlite-write.batcher';

/**
 * Appending tracking messages to the embedded log: each message and its dedupe row (table `dedupe`)
 * in the same transaction, so an id is never marked seen without its message being stored.
 */
export class SqliteTrackingPublisher {
  private readonly statements: {
    selectDedupe: Statement;
    insertMessage: Statement;
    upsertDedupe: Statement;
    deleteMessagesBefore: Statement;
    deleteExpiredDedupe: Statement;
  };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    private readonly dedupeWindowMs: number,
    /** Called inside the write that stored a message: consumers and tails read on after its commit. */
    private readonly onStored: () => void,
  ) {
    this.statements = {
      selectDedupe: database.prepare('SELECT sequence, expires_at FROM dedupe WHERE message_id = ?'),
      insertMessage: database.prepare(
        'INSERT INTO messages (workspace_id, source_id, message_id, payload, published_at) VALUES (?, ?, ?, ?, ?)',
      ),
      upsertDedupe: database.prepare(
        `INSERT INTO dedupe (message_id, sequence, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (message_id) DO UPDATE SET sequence = excluded.sequence, expires_at = excluded.expires_at`,
      ),
      deleteMessagesBefore: database.prepare('DELETE FROM messages WHERE published_at < ?'),
      deleteExpiredDedupe: database.prepare('DELETE FROM dedupe WHERE expires_at <= ?'),
    };
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    assertValidMessages(messages);
    const { selectDedupe, insertMessage, upsertDedupe } = this.statements;
    return Promise.all(
      messages.map((message) => {
        const payload = JSON.stringify(message.payload);
        return this.enqueueWrite((now): PublishOutcome => {
          const seen = selectDedupe.get(message.messageId) as
            { sequence: number; expires_at: number } | undefined;
          if (seen && seen.expires_at > now) {
            return { messageId: message.messageId, duplicate: true, sequence: seen.sequence };
          }
          const inserted = insertMessage.run(
            message.workspaceId,
            message.sourceId,
            message.messageId,
            payload,
            now,
          );
          const sequence = Number(inserted.lastInsertRowid);
          upsertDedupe.run(message.messageId, sequence, now + this.dedupeWindowMs);
          this.onStored();
          return { messageId: message.messageId, duplicate: false, sequence };
        });
      }),
    );
  }

  /** Inside a write: drops the messages older than `cutoff` and the ids whose window ended. */
  deleteExpired(cutoff: number, now: number): void {
    this.statements.deleteMessagesBefore.run(cutoff);
    this.statements.deleteExpiredDedupe.run(now);
  }
}
