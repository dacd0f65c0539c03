import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventStoreContract } from '../../event-store.contract';
import type { NewEvent, RecordedEvent } from '../../event-store.port';
import { SqliteEventStore } from './sqlite-event-store.adapter';

// Every store gets a fresh file in a temp directory that is removed when its suite is done.
const contractDir = mkdtempSync(join(tmpdir(), 'tributary-event-store-contract-'));
let contractFileCounter = 0;

describeEventStoreContract(
  'SqliteEventStore',
  async () => new SqliteEventStore(join(contractDir, `events-${++contractFileCounter}.sqlite`)),
  () => rmSync(contractDir, { recursive: true, force: true }),
);

describe('SqliteEventStore on a shared file', () => {
  const sharedDir = mkdtempSync(join(tmpdir(), 'tributary-event-store-shared-'));
  let fileCounter = 0;
  const newDatabaseFile = () => join(sharedDir, `events-${++fileCounter}.sqlite`);
  afterAll(() => rmSync(sharedDir, { recursive: true, force: true }));

  const openStores: SqliteEventStore[] = [];
  const open = (file: string) => {
    const store = new SqliteEventStore(file);
    openStores.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(openStores.splice(0).map((store) => store.close()));
  });

  it('keeps every event across a restart', async () => {
    const file = newDatabaseFile();
    const first = open(file);
    await first.append('source-1', [event('SourceCreated', { name: 'web' })], 'no_stream');
    await first.append('source-1', [event('SourceRenamed', { name: 'site' })], 0);
    const destination = await first.append('destination-1', [event('DestinationCreated')], 'no_stream');
    const before = [...(await first.readStream('source-1')), ...(await first.readStream('destination-1'))];
    await first.close();

    const reopened = open(file);
    const after = [
      ...(await reopened.readStream('source-1')),
      ...(await reopened.readStream('destination-1')),
    ];
    expect(after).toEqual(before);
    expect(after.map((recorded) => recorded.data)).toEqual([{ name: 'web' }, { name: 'site' }, {}]);

    // Revision checks and positions carry on where they stopped.
    await expect(reopened.append('source-1', [event('Stale')], 0)).rejects.toMatchObject({ actual: 1 });
    const next = await reopened.append('source-1', [event('SourceDisabled')], 1);
    expect(next.revision).toBe(2);
    expect(next.position).toBeGreaterThan(destination.position);
  });

  it('shows a second instance the events of the first, including to a live subscription', async () => {
    const file = newDatabaseFile();
    const writer = open(file);
    const reader = open(file);
    await writer.append('source-1', [event('SourceCreated')], 'no_stream');
    expect((await reader.readStream('source-1')).map((recorded) => recorded.type)).toEqual(['SourceCreated']);

    const received: RecordedEvent[] = [];
    let caughtUp = false;
    reader.subscribeToAll((recorded) => void received.push(recorded), {
      onCaughtUp: () => (caughtUp = true),
    });
    await waitUntil(() => caughtUp);
    expect(received.map((recorded) => recorded.type)).toEqual(['SourceCreated']);

    // Nothing wakes the reader in-process here: only its poll of the file can see this append.
    await writer.append('source-1', [event('SourceRenamed')], 0);
    await waitUntil(() => received.length === 2, 2000);
    expect(received[1]).toMatchObject({ streamName: 'source-1', type: 'SourceRenamed', revision: 1 });

    // The second instance's revision check sees the first instance's writes.
    await expect(reader.append('source-1', [event('Stale')], 0)).rejects.toMatchObject({
      name: 'WrongExpectedRevisionError',
      actual: 1,
    });
  });

  it('uses WAL journaling so readers and a writer in other processes do not block each other', async () => {
    const file = newDatabaseFile();
    open(file);
    const Database = (await import('@tributary/sqlite')).Database;
    const inspector = new Database(file, { readonly: true });
    try {
      expect(inspector.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      inspector.close();
    }
  });

  it('works in memory', async () => {
    const store = open(':memory:');
    await store.append('source-1', [event('SourceCreated')], 'no_stream');
    expect(await store.readStream('source-1')).toHaveLength(1);
  });
});

function event(type: string, data: Record<string, unknown> = {}): NewEvent {
  return { type, data, metadata: { actor: 'system', requestId: 'req-1', time: '2025-01-01T00:00:00.000Z' } };
}

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
