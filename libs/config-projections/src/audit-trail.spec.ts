import { MASKED_SECRET } from '@tributary/contracts';
import {
  type EventStore,
  EventStoreUnavailableError,
  type NewEvent,
  SqliteEventStore,
} from '@tributary/event-store';
import { limitDepth, maskSecrets, readAuditPage, TOO_DEEP_MARKER } from './audit-trail';

const metadata = { actor: 'access-tokens/1', requestId: 'req', time: '2026-01-01T00:00:00.000Z' };
const event = (type: string, data: Record<string, unknown>): NewEvent => ({ type, data, metadata });

describe('maskSecrets', () => {
  it('drops hashes and masks encrypted values at any depth, in objects and arrays', () => {
    expect(
      maskSecrets({
        tokenHash: 'h',
        config: { apiSecret: 'enc:v1:abc', list: [{ passwordHash: 'p', keep: 'enc:v1:x' }, 'plain'] },
      }),
    ).toEqual({ config: { apiSecret: MASKED_SECRET, list: [{ keep: MASKED_SECRET }, 'plain'] } });
  });

  it('masks write keys, which let anyone holding them ingest', () => {
    expect(
      maskSecrets({ workspaceSlug: 'a', writeKey: 'wk_live', source: { writeKeys: ['k1', 'k2'] } }),
    ).toEqual({
      workspaceSlug: 'a',
      writeKey: MASKED_SECRET,
      source: { writeKeys: [MASKED_SECRET, MASKED_SECRET] },
    });
  });

  it('cuts values nested past 64 levels instead of overflowing the stack', () => {
    let deep: unknown = 'enc:v1:bottom';
    for (let level = 0; level < 200_000; level += 1) deep = [{ a: deep }];
    const masked = maskSecrets({ deep }) as Record<string, unknown>;
    let level = 1;
    let current: unknown = masked.deep;
    while (typeof current === 'object' && current !== null) {
      current = Array.isArray(current) ? current[0] : (current as { a: unknown }).a;
      level += 1;
    }
    // 64 levels of containers (the root is the first), then the marker.
    expect({ current, level }).toEqual({ current: TOO_DEEP_MARKER, level: 64 });
    expect(limitDepth({ a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  it('keeps a stored `__proto__` key as a key, never as a prototype', () => {
    const stored = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const masked = maskSecrets(stored) as Record<string, unknown>;
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(Object.hasOwn(masked, '__proto__')).toBe(true);
    expect((masked as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('handles wide values', () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, [index]]));
    expect(Object.keys(maskSecrets(wide) as object)).toHaveLength(100_000);
  });
});

describe('readAuditPage', () => {
  let store: SqliteEventStore;

  beforeEach(async () => {
    store = new SqliteEventStore(':memory:');
    await store.append(
      'workspace-a',
      [event('WorkspaceCreated', { slug: 'a', displayName: 'A' })],
      'no_stream',
    );
    await store.append(
      'workspace-b',
      [event('WorkspaceCreated', { slug: 'b', displayName: 'B' })],
      'no_stream',
    );
    // 1,200 sources in workspace a, interleaved with workspace b's: more than two scan batches.
    for (let index = 0; index < 1_200; index += 1) {
      const workspaceSlug = index % 3 === 0 ? 'b' : 'a';
      await store.append(
        `source-${workspaceSlug}/s${index}`,
        [
          event('SourceCreated', {
            workspaceSlug,
            sourceSlug: `s${index}`,
            writeKey: 'k',
            secret: 'enc:v1:x',
          }),
        ],
        'no_stream',
      );
    }
    await store.append(
      'user-x',
      [event('UserRegistered', { email: 'x@example.com', passwordHash: 'p' })],
      'no_stream',
    );
  });

  afterEach(async () => {
    await store.close();
  });

  async function allPages(workspaceSlug: string, prefix: string, pageSize: number) {
    const pages: string[][] = [];
    let before: bigint | undefined;
    for (;;) {
      const page = await readAuditPage(store, {
        workspaceSlug,
        resourceNamePrefix: prefix,
        before,
        pageSize,
      });
      pages.push(page.entries.map((entry) => entry.resourceName));
      if (!page.more) return pages;
      before = page.nextBefore;
    }
  }

  it('reads one workspace newest first, page by page, with no page past the last', async () => {
    const pages = await allPages('a', '', 300);
    expect(pages.map((page) => page.length)).toEqual([300, 300, 201]);
    const names = pages.flat();
    expect(names[0]).toBe('workspaces/a/sources/s1199');
    expect(names[names.length - 1]).toBe('workspaces/a');
    expect(names.every((name) => name.startsWith('workspaces/a'))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
  });

  it('reports no next page when the last page is exactly full', async () => {
    const pages = await allPages('b', '', 401);
    expect(pages.map((page) => page.length)).toEqual([401]);
  });

  it('narrows to a resource name prefix and masks the data', async () => {
    const page = await readAuditPage(store, {
      workspaceSlug: 'a',
      resourceNamePrefix: 'workspaces/a/sources/s11',
      pageSize: 100,
    });
    const expected = Array.from({ length: 1_200 }, (_, index) => index)
      .filter((index) => index % 3 !== 0 && `s${index}`.startsWith('s11'))
      .reverse()
      .map((index) => `workspaces/a/sources/s${index}`);
    expect(page.entries.map((entry) => entry.resourceName)).toEqual(expected);
    expect(page.entries.every((entry) => entry.resourceName.startsWith('workspaces/a/sources/s11'))).toBe(
      true,
    );
    expect(page.entries[0].data).toMatchObject({ secret: MASKED_SECRET });
    expect(page.entries[0]).toMatchObject({
      type: 'SourceCreated',
      actor: 'access-tokens/1',
      requestId: 'req',
    });
  });

  it('reads at most the scan limit for one page, and says where the next page goes on', async () => {
    const reads = jest.spyOn(store, 'readAllBackwards');
    const first = await readAuditPage(store, {
      workspaceSlug: 'a',
      resourceNamePrefix: 'workspaces/a/sources/none',
      pageSize: 100,
      scanLimit: 500,
    });
    expect(reads).toHaveBeenCalledTimes(1);
    expect(first.entries).toEqual([]);
    expect(first.more).toBe(true);
    expect(first.nextBefore).toBeDefined();

    // Paging on with the cursor reads the rest of the store, a bounded slice per page.
    let page = first;
    let pages = 1;
    while (page.more) {
      page = await readAuditPage(store, {
        workspaceSlug: 'a',
        resourceNamePrefix: 'workspaces/a/sources/none',
        before: page.nextBefore,
        pageSize: 100,
        scanLimit: 500,
      });
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(reads.mock.calls.every(([options]) => (options.maxCount ?? 0) <= 500)).toBe(true);
  });

  it('by default reads no more than 5,000 events for one page', async () => {
    for (let index = 0; index < 5_000; index += 1) {
      await store.append(
        `source-b/extra${index}`,
        [event('SourceCreated', { workspaceSlug: 'b', sourceSlug: `extra${index}`, writeKey: 'k' })],
        'no_stream',
      );
    }
    const reads = jest.spyOn(store, 'readAllBackwards');
    const page = await readAuditPage(store, { workspaceSlug: 'a', resourceNamePrefix: '', pageSize: 10 });
    expect(page).toMatchObject({ entries: [], more: true });
    const scanned = reads.mock.calls.reduce((sum, [options]) => sum + (options.maxCount ?? 0), 0);
    expect(scanned).toBeLessThanOrEqual(5_000);
  });

  it('skips an event whose data it cannot place instead of failing the page', async () => {
    await store.append(
      'destination-x',
      [event('DestinationFilterCreated', { workspaceSlug: 'a' })],
      'no_stream',
    );
    const page = await readAuditPage(store, { workspaceSlug: 'a', resourceNamePrefix: '', pageSize: 2 });
    expect(page.entries.map((entry) => entry.resourceName)).toEqual([
      'workspaces/a/sources/s1199',
      'workspaces/a/sources/s1198',
    ]);
  });

  it('reports a store that cannot be read as unavailable', async () => {
    const broken: EventStore = new SqliteEventStore(':memory:');
    await broken.close();
    await expect(
      readAuditPage(broken, { workspaceSlug: 'a', resourceNamePrefix: '', pageSize: 10 }),
    ).rejects.toBeInstanceOf(EventStoreUnavailableError);
  });
});
