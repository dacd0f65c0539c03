import type { Database, Statement } from '@tributary/sqlite';
import {
  FUNCTION_LOG_RETENTION_MS,
  FUNCTION_LOGS_KEPT_PER_FUNCTION,
  type FunctionLogEntry,
  type FunctionLogPage,
  type ListFunctionLogsOptions,
} from '../../ports/function-logs.port';
import {
  assertFunctionLogEntries,
  assertListFunctionLogs,
  functionLogPageToken,
  positionOfFunctionLogPageToken,
  storedFunctionLogEntry,
} from '../../function-logs.validation';
import { assertSubjectToken } from '../../event-log.validation';
import type { EnqueueWrite } from './sqlite-write.batcher';

/**
 * Function logs in the embedded log's file. `AUTOINCREMENT` keeps row ids from being reused after
 * a prune or an erase, so a page token (a row id) never lands among entries stored after it.
 */
export const SQLITE_FUNCTION_LOGS_SCHEMA = `
CREATE TABLE IF NOT EXISTS function_logs (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id  TEXT    NOT NULL,
  function_id   TEXT    NOT NULL,
  instance      TEXT,
  entry         TEXT    NOT NULL,
  stored_at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS function_logs_by_function ON function_logs (workspace_id, function_id, id);
CREATE INDEX IF NOT EXISTS function_logs_by_time ON function_logs (stored_at);
`;

/** What the `entry` column holds: the entry without the keys its row already has. */
type StoredBody = Omit<FunctionLogEntry, 'workspaceId' | 'functionId'>;

interface LogRow {
  id: number;
  workspace_id: string;
  function_id: string;
  entry: string;
}

export class SqliteFunctionLogs {
  private readonly statements: {
    insert: Statement;
    prune: Statement;
    page: Statement;
    pageOfInstance: Statement;
    erase: Statement;
    deleteBefore: Statement;
  };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
  ) {
    database.exec(SQLITE_FUNCTION_LOGS_SCHEMA);
    const columns = 'id, workspace_id, function_id, entry';
    const ofFunction = 'workspace_id = ? AND function_id = ?';
    this.statements = {
      insert: database.prepare(
        'INSERT INTO function_logs (workspace_id, function_id, instance, entry, stored_at) VALUES (?, ?, ?, ?, ?)',
      ),
      // Everything at or below the oldest entry past the newest `FUNCTION_LOGS_KEPT_PER_FUNCTION`: a
      // walk of that many index entries, none when the function has fewer (the bound is then NULL).
      prune: database.prepare(
        `DELETE FROM function_logs WHERE ${ofFunction} AND id <= (
           SELECT id FROM function_logs WHERE ${ofFunction} ORDER BY id DESC LIMIT 1 OFFSET ${FUNCTION_LOGS_KEPT_PER_FUNCTION}
         )`,
      ),
      page: database.prepare(
        `SELECT ${columns} FROM function_logs WHERE ${ofFunction} AND id < ? AND stored_at >= ?
         ORDER BY id DESC LIMIT ?`,
      ),
      // At most `FUNCTION_LOGS_KEPT_PER_FUNCTION` rows of the function to scan for the instance's.
      pageOfInstance: database.prepare(
        `SELECT ${columns} FROM function_logs WHERE ${ofFunction} AND id < ? AND stored_at >= ? AND instance = ?
         ORDER BY id DESC LIMIT ?`,
      ),
      erase: database.prepare(`DELETE FROM function_logs WHERE ${ofFunction}`),
      deleteBefore: database.prepare('DELETE FROM function_logs WHERE stored_at < ?'),
    };
  }

  append(entries: FunctionLogEntry[]): Promise<void> {
    assertFunctionLogEntries(entries);
    if (entries.length === 0) return Promise.resolve();
    const rows = entries.map((entry) => {
      const { workspaceId, functionId, ...body } = storedFunctionLogEntry(entry);
      return { workspaceId, functionId, instance: body.instance ?? null, body: JSON.stringify(body) };
    });
    return this.enqueueWrite((now) => {
      const functions = new Map<string, [string, string]>();
      for (const row of rows) {
        this.statements.insert.run(row.workspaceId, row.functionId, row.instance, row.body, now);
        functions.set(`${row.workspaceId}.${row.functionId}`, [row.workspaceId, row.functionId]);
      }
      for (const [workspaceId, functionId] of functions.values()) {
        this.statements.prune.run(workspaceId, functionId, workspaceId, functionId);
      }
    });
  }

  list(workspaceId: string, functionId: string, options: ListFunctionLogsOptions): FunctionLogPage {
    assertListFunctionLogs(workspaceId, functionId, options);
    const before = positionOfFunctionLogPageToken(options.pageToken) ?? Number.MAX_SAFE_INTEGER;
    const since = Date.now() - FUNCTION_LOG_RETENTION_MS;
    // One more than the page tells whether another page follows.
    const limit = options.pageSize + 1;
    const rows = (
      options.instance === undefined
        ? this.statements.page.all(workspaceId, functionId, before, since, limit)
        : this.statements.pageOfInstance.all(workspaceId, functionId, before, since, options.instance, limit)
    ) as LogRow[];
    const page = rows.slice(0, options.pageSize);
    return {
      entries: page.map((row) => ({
        workspaceId: row.workspace_id,
        functionId: row.function_id,
        ...(JSON.parse(row.entry) as StoredBody),
      })),
      nextPageToken: rows.length > options.pageSize ? functionLogPageToken(page[page.length - 1].id) : '',
    };
  }

  async erase(workspaceId: string, functionId: string): Promise<void> {
    assertSubjectToken('workspaceId', workspaceId);
    assertSubjectToken('functionId', functionId);
    await this.enqueueWrite(() => this.statements.erase.run(workspaceId, functionId));
  }

  /** Deletes entries past the retention; run by the log's maintenance. */
  deleteExpired(now: number): void {
    this.statements.deleteBefore.run(now - FUNCTION_LOG_RETENTION_MS);
  }
}
