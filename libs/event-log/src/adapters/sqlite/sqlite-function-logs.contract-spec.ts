import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '@tributary/sqlite';
import { FUNCTION_LOG_RETENTION_MS } from '../../ports/function-logs.port';
import { describeFunctionLogsContract } from '../../function-logs.contract';
import { SqliteEventLog } from './sqlite-event-log.adapter';

describeFunctionLogsContract('sqlite', () => ({
  async newStore(settings) {
    const directory = mkdtempSync(join(tmpdir(), 'tributary-function-logs-'));
    const file = join(directory, 'event-log.sqlite');
    return {
      open: () => SqliteEventLog.open({ ...settings, file }),
      dispose: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
}));

describe('SqliteEventLog function logs (sqlite only)', () => {
  it('deletes the rows of entries past 24 h in its maintenance, not only hides them', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tributary-function-logs-'));
    const file = join(directory, 'event-log.sqlite');
    try {
      const settings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000, maintenanceIntervalMs: 50 };
      const log = await SqliteEventLog.open({ ...settings, file });
      await log.appendFunctionLogs([
        {
          workspaceId: 'ws1',
          functionId: 'dfn_old',
          time: new Date().toISOString(),
          level: 'info',
          message: 'old',
          version: 1,
          invocationId: 'inv-1',
        },
      ]);
      await log.close();
      // Back-date the row as if it had been stored a day and a minute ago.
      const database = new Database(file);
      database
        .prepare('UPDATE function_logs SET stored_at = ?')
        .run(Date.now() - FUNCTION_LOG_RETENTION_MS - 60_000);
      database.close();

      const reopened = await SqliteEventLog.open({ ...settings, file });
      await reopened.close();
      const check = new Database(file);
      try {
        expect(check.prepare('SELECT COUNT(*) AS count FROM function_logs').get()).toEqual({ count: 0 });
      } finally {
        check.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
