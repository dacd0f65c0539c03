import type { Database, Statement } from '@tributary/sqlite';
import { assertSeenOnce } from '../../event-log.validation';
import { SeenOnceCapacityError } from '../../ports/seen-once.port';
import type { EnqueueWrite } from './sqlite-write.batcher';

/** One-time keys in the embedded log's file (table `seen_once`), at most `capacity()` live at once. */
export class SqliteSeenOnce {
  private readonly statements: {
    select: Statement;
    count: Statement;
    upsert: Statement;
    deleteExpired: Statement;
  };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    /** Read on every call: the log's setting, which a test may lower while the log runs. */
    private readonly capacity: () => number,
    private readonly assertOpen: () => void,
  ) {
    this.statements = {
      select: database.prepare('SELECT expires_at FROM seen_once WHERE key = ?'),
      count: database.prepare('SELECT count(*) AS count FROM seen_once'),
      upsert: database.prepare(
        `INSERT INTO seen_once (key, expires_at) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`,
      ),
      deleteExpired: database.prepare('DELETE FROM seen_once WHERE expires_at <= ?'),
    };
  }

  async markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    assertSeenOnce(key, ttlMs);
    this.assertOpen();
    const capacity = this.capacity();
    const s = this.statements;
    // A refusal is returned, not thrown: a throw would roll back every write batched with this one.
    const outcome = await this.enqueueWrite((now): 'recorded' | 'seen' | 'full' => {
      const existing = s.select.get(key) as { expires_at: number } | undefined;
      if (existing && existing.expires_at > now) return 'seen';
      if (!existing && (s.count.get() as { count: number }).count >= capacity) {
        s.deleteExpired.run(now);
        if ((s.count.get() as { count: number }).count >= capacity) return 'full';
      }
      s.upsert.run(key, now + ttlMs);
      return 'recorded';
    });
    if (outcome === 'full') throw new SeenOnceCapacityError(capacity);
    return outcome === 'recorded';
  }

  /** Inside a write: drops the keys whose time is up. */
  deleteExpired(now: number): void {
    this.statements.deleteExpired.run(now);
  }
}
