/**
 * The delivery port's contract (`delivery/delivery-adapter.port.ts`), run over the built-in destination
 * definitions, each adapter made by its definition's `createAdapter` as the registry makes it:
 * `deliver` never rejects, answers one result per message in request order with its messageId, turns a
 * vendor failure and a misconfigured destination into outcomes, and keeps working after `close()`.
 *
 * Every definition but the Actions ones must have its fixture here (the first test fails otherwise), so
 * a new destination folder is held to the contract from its first line in `definitions.ts`. The Actions
 * definitions share one adapter, run in the Actions lane: a sample of them runs here, and every one runs
 * through its presets in `segment-actions/actions-catalog.contract-spec.ts`.
 *
 * The HTTP destinations call a loopback fake vendor; PostgreSQL is the real server of `TEST_DATABASE_URL`
 * (as in `postgres/postgres.adapter.spec.ts`), each run in a schema of its own, dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { NormalizedMessage } from '@tributary/contracts';
import { startFakeVendor, type FakeVendor } from '../../../test/support/fake-vendor.kit';
import { DESTINATION_DEFINITIONS, findDestinationDefinition } from './definitions';
import type { AdapterDependencies } from './destination-definition';
import type { DeliveryAdapter } from './delivery/delivery-adapter.port';
import { findActionsDestination } from './segment-actions/actions-catalog.entries';

jest.setTimeout(60_000);

const databaseUrl = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `tributary_contract_${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;

type Settings = Readonly<Record<string, unknown>>;

/** A way the destination fails that is not the message's fault: set up, then deliver with `settings`. */
interface Failure {
  name: string;
  arrange?: () => void;
  settings: () => Settings | Promise<Settings>;
}

interface Fixture {
  settings: () => Settings;
  misconfigured: Settings;
  failures: () => Failure[];
}

let vendor: FakeVendor;
const shared = new Map<string, { close(): Promise<void> }>();
let dependencies: AdapterDependencies;

beforeAll(async () => {
  vendor = await startFakeVendor();
  dependencies = {
    egressGuard: vendor.egressGuard,
    options: {
      webhooks: { timeoutMs: 1_000 },
      postgres: { connectionTimeoutMs: 2_000 },
      segmentActions: {
        ca: vendor.ca,
        portMap: vendor.portMap,
        requestTimeoutMs: 1_000,
        messageTimeoutMs: 2_000,
        workers: 1,
      },
    },
    shared<T extends { close(): Promise<void> }>(key: string, create: () => T): T {
      if (!shared.has(key)) shared.set(key, create());
      return shared.get(key) as T;
    },
  };
});
afterAll(async () => {
  await Promise.allSettled([...shared.values()].map((resource) => resource.close()));
  await vendor.close();
  const inspector = new Client({ connectionString: databaseUrl });
  await inspector.connect().catch(() => undefined);
  await inspector.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await inspector.end().catch(() => undefined);
});

/** The vendor resets, hangs past the timeout, fails, refuses. */
const vendorFailures = (settings: () => Settings): Failure[] =>
  (['reset', 'hang', { status: 500 }, { status: 404 }] as const).map((answer) => ({
    name: typeof answer === 'string' ? answer : `HTTP ${answer.status}`,
    arrange: () => {
      vendor.answer = () => answer;
    },
    settings,
  }));

async function portWithNothingListening(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const webhooks: Fixture = {
  settings: () => Object.freeze({ url: `http://127.0.0.1:${vendor.portMap[80]}/hook` }),
  misconfigured: Object.freeze({ url: 'not a url' }),
  failures: () => vendorFailures(webhooks.settings),
};

const postgres: Fixture = {
  settings: () => Object.freeze({ connection_string: databaseUrl, schema }),
  misconfigured: Object.freeze({ schema }),
  failures: () => [
    {
      name: 'no server at the address',
      settings: async () =>
        Object.freeze({
          connection_string: `postgres://postgres@127.0.0.1:${await portWithNothingListening()}/postgres`,
          schema,
        }),
    },
  ],
};

const actionsAmplitude: Fixture = {
  settings: () => Object.freeze({ apiKey: 'k', secretKey: 's' }),
  misconfigured: Object.freeze({ secretKey: 's' }),
  failures: () => vendorFailures(actionsAmplitude.settings),
};

/** By slug: every definition but the Actions ones, and the Actions sample. */
const fixtures: Readonly<Record<string, Fixture>> = {
  webhooks,
  postgres,
  'actions-amplitude': actionsAmplitude,
};

const subjects = Object.entries(fixtures).map(([slug, fixture]) => ({ slug, ...fixture }));

function messages(prefix: string, count: number): NormalizedMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'track',
    event: `Event ${index}`,
    userId: 'user-1',
    anonymousId: 'anon-1',
    messageId: `${prefix}-${randomUUID()}-${index}`,
    properties: { index },
    context: {},
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
  })) as unknown as NormalizedMessage[];
}

function create(slug: string): DeliveryAdapter {
  const definition = findDestinationDefinition(slug);
  if (!definition) throw new Error(`no definition for ${slug}`);
  const adapter = definition.createAdapter(dependencies);
  expect(adapter.slug).toBe(slug);
  return adapter;
}

it('has a fixture for every definition but the Actions ones, and only for definitions', () => {
  const slugs = DESTINATION_DEFINITIONS.map((definition) => definition.catalog.slug);
  const withoutFixture = slugs.filter((slug) => !fixtures[slug] && !findActionsDestination(slug));
  expect(withoutFixture).toEqual([]);
  for (const slug of Object.keys(fixtures)) expect(slugs).toContain(slug);
});

describe.each(subjects)('delivery port contract: $slug', ({ slug, settings, misconfigured, failures }) => {
  it('answers one result per message, in order, each with its messageId', async () => {
    vendor.answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
    const adapter = create(slug);
    const sent = messages('order', 7);
    const results = await adapter.deliver({ settings: settings(), messages: sent, sourceSlug: 'contract' });
    expect(results.map((result) => result.messageId)).toEqual(sent.map((message) => message.messageId));
    expect(results.map((result) => result.outcome)).toEqual(sent.map(() => 'delivered'));
    await adapter.close();
  });

  it('never rejects: failures of the destination and hangs are outcomes', async () => {
    const adapter = create(slug);
    for (const failure of failures()) {
      failure.arrange?.();
      const results = await adapter.deliver({
        settings: await failure.settings(),
        messages: messages('fail', 2),
        sourceSlug: 'contract',
      });
      expect({ failure: failure.name, count: results.length }).toEqual({ failure: failure.name, count: 2 });
      for (const result of results) expect(['retry', 'discard']).toContain(result.outcome);
    }
    await adapter.close();
  });

  it('a misconfigured destination discards every message with a reason', async () => {
    const adapter = create(slug);
    const results = await adapter.deliver({
      settings: misconfigured,
      messages: messages('bad', 3),
      sourceSlug: 'contract',
    });
    expect(results.map((result) => result.outcome)).toEqual(['discard', 'discard', 'discard']);
    for (const result of results)
      expect(result).toMatchObject({ reason: expect.stringContaining('misconfigured') });
    await adapter.close();
  });

  it('answers an empty request with no results, and keeps delivering after close()', async () => {
    vendor.answer = () => ({ status: 200, body: '{}' });
    const adapter = create(slug);
    expect(await adapter.deliver({ settings: settings(), messages: [], sourceSlug: 'contract' })).toEqual([]);
    await adapter.close();
    const sent = messages('reopen', 1);
    const [result] = await adapter.deliver({ settings: settings(), messages: sent, sourceSlug: 'contract' });
    expect(result).toMatchObject({ messageId: sent[0]!.messageId, outcome: 'delivered' });
    await adapter.close();
  });
});
