import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KurrentDbEventStore } from './adapters/kurrentdb/kurrentdb-event-store.adapter';
import { SqliteEventStore } from './adapters/sqlite/sqlite-event-store.adapter';
import { createEventStore } from './index';

describe('createEventStore', () => {
  const baseDir = mkdtempSync(join(tmpdir(), 'tributary-create-event-store-'));
  afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

  it('uses SQLite at <dataDir>/config-events.sqlite without a URL, creating the directory', async () => {
    const dataDir = join(baseDir, 'nested', 'data');
    const store = createEventStore({ dataDir });
    try {
      expect(store).toBeInstanceOf(SqliteEventStore);
      await store.append(
        'source-1',
        [{ type: 'A', data: {}, metadata: { actor: 'system', requestId: 'r', time: 't' } }],
        'no_stream',
      );
      expect(existsSync(join(dataDir, 'config-events.sqlite'))).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('treats an empty URL as no URL', async () => {
    const store = createEventStore({ eventStoreUrl: '', dataDir: join(baseDir, 'empty-url') });
    await store.close();
    expect(store).toBeInstanceOf(SqliteEventStore);
  });

  it('uses KurrentDB when a URL is given, and leaves the data directory alone', async () => {
    const dataDir = join(baseDir, 'unused');
    const store = createEventStore({ eventStoreUrl: 'kurrentdb://127.0.0.1:1?tls=false', dataDir });
    await store.close();
    expect(store).toBeInstanceOf(KurrentDbEventStore);
    expect(existsSync(dataDir)).toBe(false);
  });
});
