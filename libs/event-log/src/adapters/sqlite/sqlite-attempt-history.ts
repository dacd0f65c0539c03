import type { Database, Statement } from '@tributary/sqlite';
import {
  fromStoredAttempts,
  withFailedAttempt,
  withStartedAttempt,
  type StoredAttempt,
} from '../../attempt-history.validation';
import type { DeliveryAttempt, FailedAttempts, StartedAttempt } from '../../event-log.port';

/**
 * One row per consumer and message that failed at least once, or whose redelivery started an
 * attempt; written only then. `first_failed_at` is the first attempt's time (retention).
 */
export const SQLITE_ATTEMPT_HISTORY_SCHEMA = `
CREATE TABLE IF NOT EXISTS failed_attempts (
  consumer_name    TEXT    NOT NULL,
  sequence         INTEGER NOT NULL,
  attempts         TEXT    NOT NULL,
  first_failed_at  INTEGER NOT NULL,
  PRIMARY KEY (consumer_name, sequence)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS failed_attempts_by_age ON failed_attempts (first_failed_at);
`;

/**
 * Failed attempts in the embedded log's file. The statements run inside the log's write transactions
 * (its batcher), so a read-append-write of one history is never interleaved with another writer's.
 */
export class SqliteAttemptHistory {
  private readonly select: Statement;
  private readonly upsert: Statement;
  private readonly delete: Statement;
  private readonly deleteOfConsumer: Statement;
  private readonly deleteBefore: Statement;

  constructor(database: Database) {
    database.exec(SQLITE_ATTEMPT_HISTORY_SCHEMA);
    this.select = database.prepare(
      'SELECT attempts FROM failed_attempts WHERE consumer_name = ? AND sequence = ?',
    );
    this.upsert = database.prepare(
      `INSERT INTO failed_attempts (consumer_name, sequence, attempts, first_failed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (consumer_name, sequence) DO UPDATE SET attempts = excluded.attempts`,
    );
    this.delete = database.prepare('DELETE FROM failed_attempts WHERE consumer_name = ? AND sequence = ?');
    this.deleteOfConsumer = database.prepare('DELETE FROM failed_attempts WHERE consumer_name = ?');
    this.deleteBefore = database.prepare('DELETE FROM failed_attempts WHERE first_failed_at < ?');
  }

  /** Call inside a write transaction. */
  record(consumerName: string, sequence: number, attempt: DeliveryAttempt): FailedAttempts {
    return this.change(consumerName, sequence, (stored) => withFailedAttempt(stored, attempt));
  }

  /** Call inside a write transaction. */
  recordStarted(consumerName: string, sequence: number, started: StartedAttempt): FailedAttempts {
    return this.change(consumerName, sequence, (stored) => withStartedAttempt(stored, started));
  }

  read(consumerName: string, sequence: number): FailedAttempts | null {
    const attempts = this.storedOf(consumerName, sequence);
    return attempts.length > 0 ? fromStoredAttempts(attempts) : null;
  }

  forget(consumerName: string, sequence: number): void {
    this.delete.run(consumerName, sequence);
  }

  forgetConsumer(consumerName: string): void {
    this.deleteOfConsumer.run(consumerName);
  }

  /** Histories older than the retention: their messages are gone too (a crash between ack and forget). */
  forgetBefore(time: number): void {
    this.deleteBefore.run(time);
  }

  private change(
    consumerName: string,
    sequence: number,
    next: (stored: StoredAttempt[]) => StoredAttempt[] | null,
  ): FailedAttempts {
    const stored = this.storedOf(consumerName, sequence);
    const attempts = next(stored);
    if (!attempts) return fromStoredAttempts(stored);
    this.upsert.run(consumerName, sequence, JSON.stringify(attempts), Date.parse(attempts[0].at));
    return fromStoredAttempts(attempts);
  }

  private storedOf(consumerName: string, sequence: number): StoredAttempt[] {
    const row = this.select.get(consumerName, sequence) as { attempts: string } | undefined;
    return row ? (JSON.parse(row.attempts) as StoredAttempt[]) : [];
  }
}
