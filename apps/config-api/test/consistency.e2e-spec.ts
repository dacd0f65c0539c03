// Invariant 4 of the design over HTTP: concurrent conflicting writes fail instead of overwriting and
// lose nothing, reads see the writes before them, and everything survives a restart. Also the
// first-start bootstrap of an instance, which must be idempotent across restarts.
import { SecretBox, secretPlace } from '@tributary/auth';
import { destinationSecretsOwner } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { MASKED_SECRET } from '@tributary/contracts';
import type { EventStore, RecordedEvent } from '@tributary/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiResponse,
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
} from '../../../test/support/config-api.client';
import { ACCESS_TOKEN, eventStoreOf, readAllEvents } from './support/config-api-e2e.kit';

/**
 * Holds every read of one stream until `size` reads are waiting, then lets them all go: every
 * writer then decides on the same revision, so the race the event store must settle is certain
 * rather than left to scheduling. Gives up waiting after `giveUpAfterMs` so a test cannot hang
 * when the server serializes the writers itself.
 */
function holdStreamReads(
  store: EventStore,
  streamName: (name: string) => boolean,
  size: number,
  giveUpAfterMs = 1000,
): () => void {
  const original = store.readStream.bind(store);
  let waiting: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const releaseAll = () => {
    clearTimeout(timer);
    const released = waiting;
    waiting = [];
    released.forEach((release) => release());
  };
  store.readStream = async (name: string): Promise<RecordedEvent[]> => {
    if (streamName(name)) {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length >= size) releaseAll();
        else if (waiting.length === 1) timer = setTimeout(releaseAll, giveUpAfterMs);
      });
    }
    return original(name);
  };
  return () => {
    releaseAll();
    store.readStream = original;
  };
}

function statusesOf(responses: ConfigApiResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const response of responses) {
    const key = response.status === 200 ? '200' : `${response.status}/${response.body?.code}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('concurrent writes and read-your-writes', () => {
  let instance: TributaryTestInstance;
  let writer: ConfigApiClient;
  const ws = 'busy';
  const source = `workspaces/${ws}/sources/js`;
  const destination = `${source}/destinations/actions-singlestore`;

  beforeAll(async () => {
    // Well above what the tests send: the limit is not what is tested here.
    instance = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    ({ writer } = await createWorkspaceWithTokens(new ConfigApiClient(instance), ws));
    await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: source, catalog_name: 'catalog/sources/javascript' },
    });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  /** Writes to one destination's stream (one per setting, plus enable and mode), none of which undoes another's change. */
  function concurrentWrites(round: string) {
    // A change of where the destination sends (its host) re-enters the stored secret with it
    // (SECURITY.md: secrets do not follow a moved target).
    const configChanges: [string, unknown, { name: string; value: unknown }[]?][] = [
      ['host', 'db.example.com', [{ name: 'password', value: 'p' }]],
      ['port', '3307'],
      ['username', 'loader'],
      ['dbName', 'analytics'],
      ['tableName', 'events'],
      ['subscriptions', []],
    ];
    const writes: {
      requestId: string;
      send: () => Promise<ConfigApiResponse>;
      visibleIn: (state: any) => boolean;
    }[] = [];
    configChanges.forEach(([key, value, alongside = []]) =>
      writes.push({
        requestId: `${round}-config-${key}`,
        send: () =>
          writer.request('PATCH', destination, {
            json: {
              destination: { config: [{ name: key, value }, ...alongside] },
              update_mask: { paths: ['destination.config'] },
            },
            headers: { 'x-request-id': `${round}-config-${key}` },
          }),
        visibleIn: (state) =>
          JSON.stringify(
            state.destination.config.find((entry: any) => entry.name.endsWith(`/config/${key}`)).value,
          ) === JSON.stringify(value),
      }),
    );
    writes.push({
      requestId: `${round}-enable`,
      send: () =>
        writer.request('PATCH', destination, {
          json: { destination: { enabled: true }, update_mask: { paths: ['destination.enabled'] } },
          headers: { 'x-request-id': `${round}-enable` },
        }),
      visibleIn: (state) => state.destination.enabled === true,
    });
    writes.push({
      requestId: `${round}-mode`,
      send: () =>
        writer.request('PATCH', destination, {
          json: {
            destination: { connection_mode: 'DEVICE' },
            update_mask: { paths: ['destination.connection_mode'] },
          },
          headers: { 'x-request-id': `${round}-mode` },
        }),
      visibleIn: (state) => state.destination.connection_mode === 'DEVICE',
    });
    for (let index = 0; index < 8; index++) {
      const title = `${round} filter ${index}`;
      writes.push({
        requestId: `${round}-filter-${index}`,
        send: () =>
          writer.request('POST', `${destination}/filters`, {
            json: { filter: { title, if: 'all', actions: [{ type: 'drop_event' }] } },
            headers: { 'x-request-id': `${round}-filter-${index}` },
          }),
        visibleIn: (state) => state.filters.some((filter: any) => filter.title === title),
      });
    }
    return writes;
  }

  it.each([
    ['as they come', false],
    ['all deciding on the same revision', true],
  ])(
    'concurrent writes to one destination (%s): 200 or 409 code 10, and nothing lost',
    async (_label, forceRace) => {
      const round = forceRace ? 'forced' : 'natural';
      // A fresh destination each round, created with the required setting so it can be enabled.
      await writer.request('DELETE', destination);
      await writer.ok('POST', `${source}/destinations`, {
        destination: {
          name: destination,
          config: [
            { name: 'host', value: 'db0.example.com' },
            { name: 'username', value: 'u' },
            { name: 'password', value: 'p' },
            { name: 'dbName', value: 'd' },
            { name: 'tableName', value: 't' },
          ],
        },
      });
      const writes = concurrentWrites(round);
      const restore = forceRace
        ? holdStreamReads(
            eventStoreOf(instance),
            (name) => name.includes('actions-singlestore'),
            writes.length,
          )
        : () => undefined;
      let responses: ConfigApiResponse[];
      try {
        responses = await Promise.all(writes.map((write) => write.send()));
      } finally {
        restore();
      }

      for (const response of responses) {
        if (response.status !== 200) expectConfigApiError(response, 409, 10);
      }
      const succeeded = writes.filter((_, index) => responses[index].status === 200);
      if (forceRace) expect(statusesOf(responses)).toEqual({ '200': 1, '409/10': writes.length - 1 });
      expect(succeeded.length).toBeGreaterThanOrEqual(1);

      const state = {
        destination: (await writer.get(destination)).body,
        filters: (await writer.get(`${destination}/filters`)).body.filters,
      };
      for (const write of succeeded)
        expect({ write: write.requestId, visible: write.visibleIn(state) }).toEqual({
          write: write.requestId,
          visible: true,
        });
      // Failed writes left nothing behind.
      const failedFilters = writes.filter(
        (write, index) => responses[index].status !== 200 && write.requestId.includes('-filter-'),
      );
      for (const write of failedFilters) expect(write.visibleIn(state)).toBe(false);

      const trail = (await writer.get(`workspaces/${ws}/audit-events?page_size=1000`)).body.audit_events;
      writes.forEach((write, index) => {
        const entries = trail.filter((entry: any) => entry.request_id === write.requestId);
        expect({ write: write.requestId, entries: entries.length }).toEqual({
          write: write.requestId,
          entries: responses[index].status === 200 ? 1 : 0,
        });
      });
    },
  );

  it.each([
    ['as they come', false],
    ['all deciding on the same revision', true],
  ])('20 concurrent creates of one source (%s): exactly one 200', async (_label, forceRace) => {
    const slug = forceRace ? 'raced-forced' : 'raced-natural';
    const restore = forceRace
      ? holdStreamReads(eventStoreOf(instance), (name) => name.includes(slug), 20)
      : () => undefined;
    let responses: ConfigApiResponse[];
    try {
      responses = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          writer.request('POST', `workspaces/${ws}/sources`, {
            json: {
              source: {
                name: `workspaces/${ws}/sources/${slug}`,
                catalog_name: 'catalog/sources/javascript',
              },
            },
            headers: { 'x-request-id': `${slug}-${index}` },
          }),
        ),
      );
    } finally {
      restore();
    }
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    for (const response of responses.filter((candidate) => candidate.status !== 200)) {
      expect(response.status).toBe(409);
      expect([6, 10]).toContain(response.body.code);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    }
    const winner = responses.find((response) => response.status === 200)!.body;
    expect((await writer.get(`workspaces/${ws}/sources/${slug}`)).body).toEqual(winner);
    const created = (await readAllEvents(eventStoreOf(instance))).filter(
      (event) => event.type === 'SourceCreated' && event.data.sourceSlug === slug,
    );
    expect(created).toHaveLength(1);
    expect(created[0].data.writeKey).toBe(winner.write_keys[0]);
  });

  it.each([
    ['as they come', false],
    ['all deciding on the same revision', true],
  ])('connects one source to at most one of two plans raced for it (%s)', async (_label, forceRace) => {
    const slug = forceRace ? 'contested-forced' : 'contested-natural';
    const sourceName = `workspaces/${ws}/sources/${slug}`;
    await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: sourceName, catalog_name: 'javascript' },
    });
    const plans = await Promise.all(
      ['one', 'two'].map((name) =>
        writer.ok('POST', `workspaces/${ws}/tracking-plans`, {
          tracking_plan: { display_name: `${slug} ${name}` },
        }),
      ),
    );
    // A source's connection is decided in its own stream: both sides' reads of it are held so each
    // decides before the other has written, and the store must refuse one of the two appends. A
    // server that decides connections one at a time never has both reads waiting; the hold then
    // gives up quickly.
    const restore = forceRace
      ? holdStreamReads(eventStoreOf(instance), (name) => name.startsWith('source-tracking-plan-'), 2, 150)
      : () => undefined;
    let responses: ConfigApiResponse[];
    try {
      responses = await Promise.all(
        plans.map((plan) =>
          writer.request('POST', `${plan.name}/source-connections`, { json: { source_name: sourceName } }),
        ),
      );
    } finally {
      restore();
    }
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    const connected = [];
    for (const plan of plans) {
      const { connections } = (await writer.get(`${plan.name}/source-connections`)).body;
      if (connections.length > 0) connected.push(plan.name);
    }
    expect(connected).toHaveLength(1);
  });

  it('lets every read see the write just before it', async () => {
    const reader = writer;
    for (let round = 0; round < 25; round++) {
      const slug = `ryw-${round}`;
      await writer.ok('POST', `workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/${slug}`, catalog_name: 'catalog/sources/node' },
      });
      expect((await reader.get(`workspaces/${ws}/sources/${slug}`)).status).toBe(200);
      await writer.ok('PATCH', destination, {
        destination: { config: [{ name: 'tableName', value: `table_${round}` }] },
        update_mask: { paths: ['destination.config'] },
      });
      const read = (await reader.get(destination)).body;
      expect(read.config.find((entry: any) => entry.name.endsWith('/tableName')).value).toBe(
        `table_${round}`,
      );
      await writer.ok('DELETE', `workspaces/${ws}/sources/${slug}`);
      expect((await reader.get(`workspaces/${ws}/sources/${slug}`)).status).toBe(404);
    }
  });
});

describe('restart on the same data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tributary-restart-'));
  let first: TributaryTestInstance | undefined;
  let second: TributaryTestInstance | undefined;

  afterAll(async () => {
    await first?.stop().catch(() => undefined);
    await second?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every resource, token, audit entry and secret', async () => {
    const secret = 'mixpanel-secret-survives-restart';
    first = await startTributary({ dataDir });
    const admin = new ConfigApiClient(first);
    const { writer, writerToken } = await createWorkspaceWithTokens(admin, 'durable');
    const source = 'workspaces/durable/sources/web';
    const destination = `${source}/destinations/actions-mixpanel`;
    await writer.ok('POST', 'workspaces/durable/sources', {
      source: { name: source, catalog_name: 'javascript' },
    });
    await writer.ok('POST', `${source}/destinations`, {
      destination: {
        name: destination,
        enabled: true,
        config: [
          { name: 'projectToken', value: 'project-token' },
          { name: 'apiSecret', value: secret },
        ],
      },
    });
    const filter = await writer.ok('POST', `${destination}/filters`, {
      filter: {
        title: 'Drop tests',
        if: 'properties.test = true',
        enabled: true,
        actions: [{ type: 'drop_event' }],
      },
    });
    const plan = await writer.ok('POST', 'workspaces/durable/tracking-plans', {
      tracking_plan: {
        display_name: 'Durable',
        rules: { events: [{ name: 'Signed Up', rules: { type: 'object' } }] },
      },
    });
    await writer.ok('POST', `${plan.name}/source-connections`, { source_name: source });
    await writer.ok('POST', 'workspaces/durable/sources', {
      source: { name: 'workspaces/durable/sources/web-violations', catalog_name: 'javascript' },
    });
    await writer.ok('PATCH', `${source}/schema-config`, {
      schema_config: { forwarding_violations_to: 'web-violations' },
      update_mask: { paths: ['schema_config.forwarding_violations_to'] },
    });

    const paths = [
      'workspaces',
      'workspaces/durable',
      'workspaces/durable/sources',
      source,
      `${source}/schema-config`,
      `${source}/destinations`,
      destination,
      `${destination}/filters`,
      filter.name,
      'workspaces/durable/tracking-plans',
      plan.name,
      `${plan.name}/source-connections`,
      'workspaces/durable/audit-events?page_size=1000',
    ];
    const snapshot = async (client: ConfigApiClient) => {
      const bodies: Record<string, unknown> = {};
      for (const path of paths) bodies[path] = await client.ok('GET', path);
      bodies['access-tokens'] = await new ConfigApiClient(client.instance).ok('GET', 'access-tokens');
      return bodies;
    };
    const before = await snapshot(writer);
    expect(JSON.stringify(before)).not.toContain(secret);
    const tokensBefore = first.app.get(ConfigReadModel).listAccessTokens();
    await first.stop();
    first = undefined;

    second = await startTributary({ dataDir, adminToken: admin.instance.adminToken });
    const writerAfter = new ConfigApiClient(second, writerToken);
    const after = await snapshot(writerAfter);
    expect(after).toEqual(before);
    expect(second.app.get(ConfigReadModel).listAccessTokens()).toEqual(tokensBefore);

    // The secret still decrypts with the key kept beside the data, and sending the mask keeps it.
    const patched = await writerAfter.ok('PATCH', destination, {
      destination: {
        config: [
          { name: 'apiSecret', value: MASKED_SECRET },
          { name: 'sourceName', value: 'web-app' },
        ],
      },
      update_mask: { paths: ['destination.config'] },
    });
    expect(patched.config.find((entry: any) => entry.name.endsWith('/sourceName')).value).toBe('web-app');
    const stored = (await readAllEvents(eventStoreOf(second)))
      .filter(
        (event) => event.type === 'DestinationCreated' && event.data.destinationSlug === 'actions-mixpanel',
      )
      .map((event) => ({
        value: (event.data.config as Record<string, string>).apiSecret!,
        place: secretPlace(
          destinationSecretsOwner(event.data as { sourceId: string; destinationSlug: string }),
          'apiSecret',
        ),
      }));
    expect(stored).toHaveLength(1);
    expect(second.app.get(SecretBox).decrypt(stored[0]!.value, stored[0]!.place)).toBe(secret);
    const laterChanges = (await readAllEvents(eventStoreOf(second))).filter(
      (event) => event.type === 'DestinationUpdated' && event.data.destinationSlug === 'actions-mixpanel',
    );
    expect(laterChanges.some((event) => 'apiSecret' in ((event.data.changes as any).config ?? {}))).toBe(
      false,
    );
  });
});

describe('instance bootstrap', () => {
  it('creates the TRIBUTARY_BOOTSTRAP_TOKEN admin token once, however often the instance starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tributary-bootstrap-'));
    const adminTokens = (instance: TributaryTestInstance) =>
      instance.app
        .get(ConfigReadModel)
        .listAccessTokens()
        .filter((token) => token.instanceAdmin);
    try {
      let instance = await startTributary({ dataDir });
      const adminToken = instance.adminToken;
      expect(adminTokens(instance)).toHaveLength(1);
      await instance.stop();
      for (let restart = 0; restart < 2; restart++) {
        instance = await startTributary({ dataDir, adminToken });
        expect(adminTokens(instance)).toHaveLength(1);
        expect((await new ConfigApiClient(instance).get('workspaces')).status).toBe(200);
        const created = (await readAllEvents(eventStoreOf(instance))).filter(
          (event) => event.type === 'AccessTokenCreated',
        );
        expect(created).toHaveLength(1);
        await instance.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('prints one generated admin token on a fresh store without bootstrap variables, and none on restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tributary-generated-'));
    const withoutBootstrap = { TRIBUTARY_BOOTSTRAP_TOKEN: '' };
    const printedTokens = async (start: () => Promise<TributaryTestInstance>) => {
      const written: string[] = [];
      const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      });
      try {
        const instance = await start();
        const tokens = written.join('').match(/[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}/g) ?? [];
        return { instance, tokens };
      } finally {
        spy.mockRestore();
      }
    };
    try {
      const fresh = await printedTokens(() => startTributary({ dataDir, environment: withoutBootstrap }));
      expect(fresh.tokens).toHaveLength(1);
      const generated = fresh.tokens[0];
      expect(generated).toMatch(ACCESS_TOKEN);
      const admin = new ConfigApiClient(fresh.instance, generated);
      await admin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/first' } });
      expect(new ConfigApiClient(fresh.instance).token).not.toBe(generated);
      await fresh.instance.stop();

      const restarted = await printedTokens(() => startTributary({ dataDir, environment: withoutBootstrap }));
      try {
        expect(restarted.tokens).toEqual([]);
        expect(
          (await new ConfigApiClient(restarted.instance, generated).get('workspaces/first')).status,
        ).toBe(200);
        const created = (await readAllEvents(eventStoreOf(restarted.instance))).filter(
          (event) => event.type === 'AccessTokenCreated',
        );
        expect(created).toHaveLength(1);
      } finally {
        await restarted.instance.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
