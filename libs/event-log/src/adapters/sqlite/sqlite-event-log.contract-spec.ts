import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventLogContract } from '../../event-log.contract';
import { SqliteEventLog } from './sqlite-event-log.adapter';

describeEventLogContract('sqlite', () => ({
  async newStore(settings) {
    const directory = mkdtempSync(join(tmpdir(), 'tributary-event-log-'));
    const file = join(directory, 'event-log.sqlite');
    return {
      // A short poll keeps the tests quick; deadlines (ack wait, nak delay) have their own timers.
      open: () => SqliteEventLog.open({ ...settings, file, pollIntervalMs: 200 }),
      dispose: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
}));
