import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeProtocolsOutcomesContract } from '../../protocols-outcomes.contract';
import { SqliteEventLog } from './sqlite-event-log.adapter';

describeProtocolsOutcomesContract('sqlite', () => ({
  async newStore(settings) {
    const directory = mkdtempSync(join(tmpdir(), 'tributary-protocols-outcomes-'));
    const file = join(directory, 'event-log.sqlite');
    return {
      open: () => SqliteEventLog.open({ ...settings, file }),
      dispose: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
}));
