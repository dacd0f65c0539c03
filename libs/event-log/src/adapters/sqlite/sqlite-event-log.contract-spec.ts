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
      // The default poll interval (1 s) on purpose: deliveries must come from wake-ups and deadline
      // timers, not from polling, or the timing assertions of the contract would catch it.
      open: () => SqliteEventLog.open({ ...settings, file }),
      dispose: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
}));
