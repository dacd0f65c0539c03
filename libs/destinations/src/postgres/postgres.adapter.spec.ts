/**
 * Against the real PostgreSQL: `TEST_DATABASE_URL`, by default the `postgres` database on 127.0.0.1:5432
 * as user `postgres` (CI starts the server). Each run writes to its own schema, dropped afterwards.
 * An unreachable server fails the suite: these tests are the only check of the SQL.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { normalizedMessageSchema, type NormalizedMessage } from '@tributary/contracts';
import type { DeliveryResult } from '../delivery/delivery-adapter.port';
import { PostgresDeliveryAdapter } from './postgres.adapter';

const databaseUrl = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `tributary_test_${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;

const base = {
  context: { library: { name: 'analytics-node', version: '3.1.0' }, ip: '203.0.113.9', app: { build: 42 } },
  integrations: {},
  receivedAt: '2026-01-02T03:04:06.000Z',
  timestamp: '2026-01-02T03:04:05.678Z',
  originalTimestamp: '2026-01-02T03:04:05.000Z',
  sentAt: '2026-01-02T03:04:05.500Z',
};

/** A message as ingest would store it: the fixture must pass the normalized schema. */
function message(fields: Record<string, unknown>): NormalizedMessage {
  const candidate = { ...base, messageId: randomUUID(), userId: 'user-1', anonymousId: 'anon-1', ...fields };
  for (const [key, value] of Object.entries(candidate))
    if (value === undefined) delete (candidate as Record<string, unknown>)[key];
  return normalizedMessageSchema.parse(candidate);
}

async function freePortWithNothingListening(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('PostgresDeliveryAdapter against a real PostgreSQL', () => {
  const adapter = new PostgresDeliveryAdapter({ connectionTimeoutMs: 2_000 });
  const inspector = new Client({ connectionString: databaseUrl });
  const settings = { connection_string: databaseUrl, schema };

  beforeAll(async () => {
    try {
      await inspector.connect();
    } catch (error) {
      throw new Error(
        `PostgreSQL is not reachable at ${databaseUrl.replace(/:[^:@/]*@/, ':***@')} (${(error as Error).message}). ` +
          'Start it (CI does) or point TEST_DATABASE_URL at a server where this user may create schemas.',
      );
    }
  });

  afterAll(async () => {
    await adapter.close();
    await inspector.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await inspector.end().catch(() => undefined);
  });

  const deliver = (messages: NormalizedMessage[], sourceId?: string) =>
    adapter.deliver({ settings, messages, ...(sourceId ? { sourceId } : {}) });

  async function columnsOf(table: string): Promise<Record<string, string>> {
    const result = await inspector.query<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [schema, table],
    );
    return Object.fromEntries(result.rows.map((row) => [row.column_name, row.data_type]));
  }

  async function rowsOf(
    table: string,
    where = 'true',
    parameters: unknown[] = [],
  ): Promise<Record<string, unknown>[]> {
    const result = await inspector.query(
      `SELECT * FROM "${schema}"."${table.replace(/"/g, '""')}" WHERE ${where}`,
      parameters,
    );
    return result.rows;
  }

  const expectAllDelivered = (results: DeliveryResult[], messages: NormalizedMessage[]) =>
    expect(results).toEqual(messages.map((each) => ({ messageId: each.messageId, outcome: 'delivered' })));

  it('creates the schema and lands all six message types in their tables', async () => {
    const track = message({
      type: 'track',
      event: 'Order Completed',
      properties: {
        orderId: 'o-1',
        total: 99.5,
        coupon: null,
        paid: true,
        items: [{ sku: 'a' }, { sku: 'b' }],
        shipping: { address: { city: 'Oslo' } },
        deliveredAt: '2026-01-05T10:00:00Z',
      },
    });
    const identify = message({ type: 'identify', traits: { email: 'a@example.com', firstName: 'Ada' } });
    const page = message({
      type: 'page',
      name: 'Home',
      category: 'Docs',
      properties: { path: '/', title: 'Welcome' },
    });
    const screen = message({ type: 'screen', name: 'Settings', properties: { tab: 'privacy' } });
    const group = message({ type: 'group', groupId: 'g-1', traits: { employees: 12, plan: 'enterprise' } });
    const alias = message({ type: 'alias', previousId: 'anon-1', anonymousId: undefined });
    const messages = [track, identify, page, screen, group, alias];

    expectAllDelivered(await deliver(messages, 'source-9'), messages);

    const tracks = await rowsOf('tracks');
    expect(tracks).toHaveLength(1);
    expect(tracks[0]).toMatchObject({
      id: track.messageId,
      user_id: 'user-1',
      anonymous_id: 'anon-1',
      event: 'order_completed',
      event_text: 'Order Completed',
      source_id: 'source-9',
      context_library_name: 'analytics-node',
      context_ip: '203.0.113.9',
      context_app_build: 42,
    });
    expect((tracks[0]!['received_at'] as Date).toISOString()).toBe(base.receivedAt);
    expect((tracks[0]!['sent_at'] as Date).toISOString()).toBe(base.sentAt);
    expect((tracks[0]!['original_timestamp'] as Date).toISOString()).toBe(base.originalTimestamp);
    expect((tracks[0]!['timestamp'] as Date).toISOString()).toBe(base.timestamp);
    // tracks holds the common columns only; properties live in the event's table.
    expect(Object.keys(await columnsOf('tracks'))).not.toContain('order_id');

    const eventColumns = await columnsOf('order_completed');
    expect(eventColumns).toMatchObject({
      id: 'text',
      received_at: 'timestamp with time zone',
      sent_at: 'timestamp with time zone',
      original_timestamp: 'timestamp with time zone',
      timestamp: 'timestamp with time zone',
      user_id: 'text',
      anonymous_id: 'text',
      event: 'text',
      event_text: 'text',
      context_library_name: 'text',
      context_app_build: 'double precision',
      order_id: 'text',
      total: 'double precision',
      paid: 'boolean',
      items: 'text',
      shipping_address_city: 'text',
      delivered_at: 'timestamp with time zone',
    });
    expect(eventColumns).not.toHaveProperty('coupon');
    const [orderRow] = await rowsOf('order_completed');
    expect(orderRow).toMatchObject({
      id: track.messageId,
      order_id: 'o-1',
      total: 99.5,
      paid: true,
      shipping_address_city: 'Oslo',
    });
    expect(JSON.parse(orderRow!['items'] as string)).toEqual([{ sku: 'a' }, { sku: 'b' }]);
    expect((orderRow!['delivered_at'] as Date).toISOString()).toBe('2026-01-05T10:00:00.000Z');

    expect(await rowsOf('identifies')).toEqual([
      expect.objectContaining({
        id: identify.messageId,
        user_id: 'user-1',
        email: 'a@example.com',
        first_name: 'Ada',
      }),
    ]);
    expect(await rowsOf('pages')).toEqual([
      expect.objectContaining({
        id: page.messageId,
        name: 'Home',
        category: 'Docs',
        path: '/',
        title: 'Welcome',
      }),
    ]);
    expect(await rowsOf('screens')).toEqual([
      expect.objectContaining({ id: screen.messageId, name: 'Settings', tab: 'privacy' }),
    ]);
    expect(await rowsOf('groups')).toEqual([
      expect.objectContaining({ id: group.messageId, group_id: 'g-1', employees: 12, plan: 'enterprise' }),
    ]);
    expect(await rowsOf('aliases')).toEqual([
      expect.objectContaining({
        id: alias.messageId,
        user_id: 'user-1',
        previous_id: 'anon-1',
        anonymous_id: null,
      }),
    ]);
    expect(await columnsOf('users')).not.toHaveProperty('anonymous_id');
  });

  it('keeps the latest traits per user in users, even when an older identify arrives late', async () => {
    const first = message({
      type: 'identify',
      userId: 'user-latest',
      traits: { plan: 'free', seats: 1 },
      receivedAt: '2026-02-01T00:00:00.000Z',
    });
    const second = message({
      type: 'identify',
      userId: 'user-latest',
      traits: { plan: 'pro', company: { name: 'Acme' } },
      receivedAt: '2026-02-02T00:00:00.000Z',
    });
    const stale = message({
      type: 'identify',
      userId: 'user-latest',
      traits: { plan: 'trial' },
      receivedAt: '2026-01-15T00:00:00.000Z',
    });

    expectAllDelivered(await deliver([first, second]), [first, second]);
    expectAllDelivered(await deliver([stale]), [stale]);

    const users = await rowsOf('users', 'id = $1', ['user-latest']);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ id: 'user-latest', plan: 'pro', seats: 1, company_name: 'Acme' });
    expect((users[0]!['received_at'] as Date).toISOString()).toBe('2026-02-02T00:00:00.000Z');
    // Every identify is still in identifies.
    expect(await rowsOf('identifies', 'user_id = $1', ['user-latest'])).toHaveLength(3);
  });

  it('does not create a users row for an anonymous identify', async () => {
    const anonymous = message({
      type: 'identify',
      userId: undefined,
      anonymousId: 'anon-only',
      traits: { plan: 'free' },
    });
    expectAllDelivered(await deliver([anonymous]), [anonymous]);
    expect(await rowsOf('identifies', 'anonymous_id = $1', ['anon-only'])).toHaveLength(1);
    expect(await rowsOf('users', 'id = $1', ['anon-only'])).toHaveLength(0);
  });

  it('changes nothing when the same messageId is delivered again, even with other content', async () => {
    const original = message({ type: 'track', event: 'Signed Up', properties: { plan: 'gold' } });
    const identify = message({ type: 'identify', userId: 'user-redelivery', traits: { plan: 'gold' } });
    expectAllDelivered(await deliver([original, identify]), [original, identify]);

    const changed = { ...original, properties: { plan: 'silver' } } as NormalizedMessage;
    const changedIdentify = {
      ...identify,
      traits: { plan: 'silver' },
      receivedAt: '2027-01-01T00:00:00.000Z',
    } as NormalizedMessage;
    expectAllDelivered(await deliver([original, changed, changedIdentify]), [
      original,
      changed,
      changedIdentify,
    ]);

    expect(await rowsOf('tracks', 'id = $1', [original.messageId])).toHaveLength(1);
    expect(await rowsOf('signed_up')).toEqual([
      expect.objectContaining({ id: original.messageId, plan: 'gold' }),
    ]);
    expect(await rowsOf('users', 'id = $1', ['user-redelivery'])).toEqual([
      expect.objectContaining({ plan: 'gold' }),
    ]);
  });

  it('writes many messages in one call together, and a batch delivered again changes nothing', async () => {
    const tracks = Array.from({ length: 40 }, (_, index) =>
      message({
        type: 'track',
        event: 'Batch Written',
        properties: { index, ...(index % 2 ? { odd: true } : {}) },
      }),
    );
    const older = message({
      type: 'identify',
      userId: 'batch-user',
      traits: { plan: 'old' },
      receivedAt: '2026-01-01T00:00:00.000Z',
    });
    const newer = message({
      type: 'identify',
      userId: 'batch-user',
      traits: { plan: 'new' },
      receivedAt: '2026-01-02T00:00:00.000Z',
    });
    // The same message twice in one call (a redelivery gathered with its first delivery) stores once.
    const batch = [...tracks, newer, older, tracks[0]!];
    expectAllDelivered(await deliver(batch, 'source-batch'), batch);
    expect(await rowsOf('batch_written', 'source_id = $1', ['source-batch'])).toHaveLength(40);
    expect(await rowsOf('tracks', 'source_id = $1', ['source-batch'])).toHaveLength(40);
    const [user] = await rowsOf('users', 'id = $1', ['batch-user']);
    expect(user).toMatchObject({ plan: 'new' });
    const identifies = await rowsOf('identifies', 'user_id = $1', ['batch-user']);
    expect(identifies).toHaveLength(2);

    const changed = tracks.map((each) => ({ ...each, properties: { index: -1 } }) as NormalizedMessage);
    expectAllDelivered(await deliver(changed, 'source-batch'), changed);
    const rows = await rowsOf('batch_written', 'source_id = $1', ['source-batch']);
    expect(rows).toHaveLength(40);
    expect(rows.every((row) => row['index'] !== -1)).toBe(true);
  });

  it('adds a column when a new property appears, keeping earlier rows', async () => {
    const before = message({ type: 'track', event: 'Video Played', properties: { title: 'Intro' } });
    expectAllDelivered(await deliver([before]), [before]);
    expect(await columnsOf('video_played')).not.toHaveProperty('duration_seconds');

    const after = message({
      type: 'track',
      event: 'Video Played',
      properties: { title: 'Outro', durationSeconds: 31.5, isAutoplay: false },
    });
    expectAllDelivered(await deliver([after]), [after]);

    expect(await columnsOf('video_played')).toMatchObject({
      duration_seconds: 'double precision',
      is_autoplay: 'boolean',
    });
    const rows = await rowsOf('video_played', 'true ORDER BY title');
    expect(rows.map((row) => [row['title'], row['duration_seconds'], row['is_autoplay']])).toEqual([
      ['Intro', null, null],
      ['Outro', 31.5, false],
    ]);
  });

  it('fits later values of another type where nothing is lost, stores null for a value that does not fit and reports it', async () => {
    const first = message({
      type: 'track',
      event: 'Typed',
      properties: { amount: 10, label: 'x', active: true, at: '2026-01-01T00:00:00Z' },
    });
    expectAllDelivered(await deliver([first]), [first]);

    const widened = message({
      type: 'track',
      event: 'Typed',
      properties: { amount: '12.25', label: 7, active: 'false', at: '2026-03-01T12:00:00+02:00' },
    });
    const unfit = message({ type: 'track', event: 'Typed', properties: { amount: 'lots' } });
    const nulByte = message({ type: 'track', event: 'Typed', properties: { label: 'bad\u0000byte' } });
    const afterwards = message({ type: 'track', event: 'Typed', properties: { amount: 3 } });
    const results = await deliver([widened, unfit, nulByte, afterwards]);

    expect(results.map((result) => result.outcome)).toEqual([
      'delivered',
      'delivered',
      'discard',
      'delivered',
    ]);
    expect(results[0]).toEqual({ messageId: widened.messageId, outcome: 'delivered' });
    // The type conflict: the row lands, with null for the value, and the adapter says so.
    expect(results[1]).toEqual({
      messageId: unfit.messageId,
      outcome: 'delivered',
      valuesNotStored: [
        {
          cause: 'type_conflict',
          table: 'typed',
          column: 'amount',
          reason: expect.stringContaining('column "amount" holds numbers, but the message has string "lots"'),
        },
      ],
    });
    expect(await rowsOf('typed', 'id = $1', [unfit.messageId])).toEqual([
      expect.objectContaining({ id: unfit.messageId, amount: null }),
    ]);
    expect(await rowsOf('tracks', 'id = $1', [unfit.messageId])).toHaveLength(1);
    // A NUL byte cannot be stored in any text column: discarded with the reason, no row anywhere.
    expect((results[2] as { reason: string }).reason).toMatch(/PostgreSQL error 22/);
    const rows = await rowsOf('typed', 'id = $1', [widened.messageId]);
    expect(rows[0]).toMatchObject({ amount: 12.25, label: '7', active: false });
    expect((rows[0]!['at'] as Date).toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(await rowsOf('tracks', 'id = ANY($1)', [[nulByte.messageId]])).toHaveLength(0);
    expect(await rowsOf('typed', 'id = $1', [afterwards.messageId])).toHaveLength(1);
  });

  it('keeps hostile event and property names inside quoted identifiers', async () => {
    const hostileEvent = `x"; DROP TABLE "${schema}".tracks; --`;
    const hostile = message({
      type: 'track',
      event: hostileEvent,
      properties: {
        'a"b': 'quote',
        'with space': 'space',
        "'); DELETE FROM tracks; --": 'injection',
        'Robert"); DROP TABLE users;--': 'bobby',
        user_id: 'shadowed standard column',
        ...{ ['😀']: 'emoji only' },
        ['ß'.repeat(80)]: 'long',
      },
    });
    const reservedEvent = message({ type: 'track', event: 'Users', properties: { n: 1 } });
    const emptyEvent = message({ type: 'track', event: '???', properties: { n: 2 } });

    const results = await deliver([hostile, reservedEvent, emptyEvent]);
    expectAllDelivered(results, [hostile, reservedEvent, emptyEvent]);

    const tableName = 'x_drop_table_' + schema + '_tracks';
    const rows = await rowsOf(tableName);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event_text: hostileEvent,
      a_b: 'quote',
      with_space: 'space',
      delete_from_tracks: 'injection',
      robert_drop_table_users: 'bobby',
      user_id: 'user-1',
    });
    const longColumn = Object.keys(rows[0]!).find((column) => column.startsWith('ßß'));
    expect(longColumn).toBeDefined();
    expect(Buffer.byteLength(longColumn!, 'utf8')).toBeLessThanOrEqual(63);
    // The standard tables are intact and the event named "Users" got its own table.
    expect(await rowsOf('tracks', 'id = $1', [hostile.messageId])).toHaveLength(1);
    expect(await rowsOf('users_event')).toEqual([
      expect.objectContaining({ id: reservedEvent.messageId, event_text: 'Users' }),
    ]);
    expect(await rowsOf('unnamed_event')).toEqual([expect.objectContaining({ id: emptyEvent.messageId })]);
  });

  it('stores properties named like the members of a JavaScript object as ordinary columns', async () => {
    // JSON.parse makes `__proto__` an own key, as the log's payloads have it (the fixture's schema
    // would not keep it, so the parsed object is put in afterwards).
    const objectLike = () =>
      JSON.parse(
        '{"__proto__":"proto","constructor":"ctor","toString":"str","hasOwnProperty":7,"valueOf":true}',
      );
    const together = [1, 2].map(() => ({
      ...message({ type: 'track', event: 'Object Like' }),
      properties: objectLike(),
    }));
    const alone = { ...message({ type: 'identify', userId: 'object-like-user' }), traits: objectLike() };
    expectAllDelivered(await deliver(together), together);
    expectAllDelivered(await deliver([alone]), [alone]);

    const expected = {
      proto: 'proto',
      constructor: 'ctor',
      to_string: 'str',
      has_own_property: 7,
      value_of: true,
    };
    const events = await rowsOf('object_like');
    expect(events).toHaveLength(2);
    for (const row of events) expect(row).toMatchObject(expected);
    expect(await rowsOf('users', 'id = $1', ['object-like-user'])).toEqual([
      expect.objectContaining(expected),
    ]);
  });

  it('retries every message when the connection string points nowhere', async () => {
    const port = await freePortWithNothingListening();
    const messages = [message({ type: 'track', event: 'Lost' }), message({ type: 'page', name: 'Lost' })];
    const results = await adapter.deliver({
      settings: { connection_string: `postgres://postgres@127.0.0.1:${port}/postgres`, schema },
      messages,
    });
    expect(results.map((result) => [result.messageId, result.outcome])).toEqual(
      messages.map((each) => [each.messageId, 'retry']),
    );
    expect((results[0] as { reason: string }).reason).toMatch(
      /^cannot connect to PostgreSQL: .*ECONNREFUSED/,
    );
  });

  it('retries when the database does not exist', async () => {
    const url = new URL(databaseUrl);
    url.pathname = `/no_such_database_${process.pid}`;
    const [result] = await adapter.deliver({
      settings: { connection_string: url.toString(), schema },
      messages: [message({ type: 'track', event: 'Lost' })],
    });
    expect(result).toMatchObject({ outcome: 'retry' });
    expect((result as { reason: string }).reason).toContain('does not exist');
  });

  it('discards with a reason when the destination is misconfigured', async () => {
    const messages = [message({ type: 'track', event: 'Misconfigured' })];
    const noConnection = await adapter.deliver({ settings: { schema }, messages });
    expect(noConnection[0]).toMatchObject({
      outcome: 'discard',
      reason: expect.stringContaining('connection_string'),
    });
    const badSchema = await adapter.deliver({
      settings: { connection_string: databaseUrl, schema: 'x"; drop' },
      messages,
    });
    expect(badSchema[0]).toMatchObject({ outcome: 'discard', reason: expect.stringContaining('schema') });
  });

  it('refuses the system schemas, creating nothing there', async () => {
    for (const systemSchema of ['pg_catalog', 'information_schema', 'pg_toast', 'PG_Anything']) {
      const messages = [message({ type: 'track', event: 'Into The Catalog' })];
      const [result] = await adapter.deliver({
        settings: { connection_string: databaseUrl, schema: systemSchema },
        sourceId: 'source-system',
        sourceSlug: 'system',
        messages,
      });
      expect(result).toEqual({
        messageId: messages[0]!.messageId,
        outcome: 'discard',
        cause: 'system_schema',
        reason: expect.stringContaining('system schema'),
      });
    }
    const created = await inspector.query(
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('tracks', 'into_the_catalog', '_tributary_tables') AND (table_schema ILIKE 'pg\\_%' OR table_schema = 'information_schema')",
    );
    expect(created.rows).toEqual([]);
  });

  it('reuses the tables after the layout cache goes stale (a table dropped behind its back)', async () => {
    const first = message({ type: 'screen', name: 'A', properties: { tab: 'one' } });
    expectAllDelivered(await deliver([first]), [first]);
    await inspector.query(`DROP TABLE "${schema}".screens`);

    const second = message({ type: 'screen', name: 'B', properties: { tab: 'two' } });
    const [afterDrop] = await deliver([second]);
    expect(afterDrop).toMatchObject({ outcome: 'retry' });
    expectAllDelivered(await deliver([second]), [second]);
    expect(await rowsOf('screens')).toEqual([expect.objectContaining({ id: second.messageId, tab: 'two' })]);
  });

  it('delivers concurrent messages that each add new columns to one table without a retry', async () => {
    // As the router's consumer does: many deliveries in flight at once, each bringing its own properties.
    const messages = Array.from({ length: 24 }, (_, index) =>
      message({
        type: 'track',
        event: 'Concurrent Columns',
        properties: { [`first_${index}`]: index, [`second_${index % 5}`]: `value ${index}` },
      }),
    );
    const results = (await Promise.all(messages.map((each) => deliver([each])))).flat();
    expectAllDelivered(results, messages);
    const columns = await columnsOf('concurrent_columns');
    for (let index = 0; index < 24; index += 1) expect(columns).toHaveProperty(`first_${index}`);
    expect(await rowsOf('concurrent_columns')).toHaveLength(24);
  });

  it('keeps the users of two sources apart in one schema', async () => {
    const fromA = message({
      type: 'identify',
      userId: 'user-shared',
      traits: { plan: 'a-plan', email: 'a@example.com' },
      receivedAt: '2026-04-01T00:00:00.000Z',
    });
    const fromB = message({
      type: 'identify',
      userId: 'user-shared',
      traits: { plan: 'b-plan' },
      // Later than A's: with one row per user id, it would win over A's traits.
      receivedAt: '2026-04-02T00:00:00.000Z',
    });
    expectAllDelivered(await deliver([fromA], 'source-a'), [fromA]);
    expectAllDelivered(await deliver([fromB], 'source-b'), [fromB]);

    const users = await rowsOf('users', 'id = $1 ORDER BY source_id', ['user-shared']);
    expect(users).toEqual([
      expect.objectContaining({
        id: 'user-shared',
        source_id: 'source-a',
        plan: 'a-plan',
        email: 'a@example.com',
      }),
      expect.objectContaining({ id: 'user-shared', source_id: 'source-b', plan: 'b-plan', email: null }),
    ]);
  });

  it('changes nothing and reports nothing when a message with a type conflict is delivered again', async () => {
    const first = message({ type: 'track', event: 'Scored', properties: { score: 5 } });
    expectAllDelivered(await deliver([first]), [first]);
    const conflicting = message({
      type: 'track',
      event: 'Scored',
      properties: { score: 'high', note: 'one' },
    });
    const [landed] = await deliver([conflicting]);
    expect(landed).toMatchObject({
      outcome: 'delivered',
      valuesNotStored: [{ cause: 'type_conflict', column: 'score' }],
    });

    const redelivered = { ...conflicting, properties: { score: 'higher', note: 'two' } } as NormalizedMessage;
    const again = await deliver([conflicting, redelivered]);
    // Nothing stored, nothing to report: the conflict was counted on the first delivery only.
    expect(again).toEqual([
      { messageId: conflicting.messageId, outcome: 'delivered' },
      { messageId: conflicting.messageId, outcome: 'delivered' },
    ]);
    expect(await rowsOf('scored', 'id = $1', [conflicting.messageId])).toEqual([
      expect.objectContaining({ score: null, note: 'one' }),
    ]);
    expect(await rowsOf('tracks', 'id = $1', [conflicting.messageId])).toHaveLength(1);
  });
});

describe('PostgresDeliveryAdapter: where a tenant may write', () => {
  const suffix = `${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  const inspector = new Client({ connectionString: databaseUrl });
  const schemasToDrop: string[] = [];
  const adapter = new PostgresDeliveryAdapter({
    connectionTimeoutMs: 2_000,
    maxEventTables: 2,
    maxColumnsPerTable: 20,
  });

  beforeAll(async () => {
    await inspector.connect();
  });

  afterAll(async () => {
    await adapter.close();
    for (const name of schemasToDrop)
      await inspector.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => undefined);
    await inspector.end().catch(() => undefined);
  });

  async function newSchema(label: string): Promise<string> {
    const name = `tributary_test_${label}_${suffix}`;
    schemasToDrop.push(name);
    await inspector.query(`CREATE SCHEMA "${name}"`);
    return name;
  }

  async function tablesOf(schemaName: string): Promise<string[]> {
    const result = await inspector.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [schemaName],
    );
    return result.rows.map((row) => row.table_name);
  }

  it("writes to the source's own schema, named after its slug, when no schema is set", async () => {
    const sourceSlug = `Web-App_${suffix}`;
    const expectedSchema = `web_app_${suffix}`;
    schemasToDrop.push(expectedSchema);
    const track = message({ type: 'track', event: 'Default Schema', properties: { n: 1 } });
    const publicTracksBefore = await inspector.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'default_schema'",
    );

    for (const schemaSetting of [undefined, '']) {
      const results = await adapter.deliver({
        settings: {
          connection_string: databaseUrl,
          ...(schemaSetting === undefined ? {} : { schema: schemaSetting }),
        },
        sourceId: 'source-default',
        sourceSlug,
        messages: [track],
      });
      expect(results).toEqual([{ messageId: track.messageId, outcome: 'delivered' }]);
    }

    const rows = await inspector.query(`SELECT id, source_id, n FROM "${expectedSchema}".default_schema`);
    expect(rows.rows).toEqual([{ id: track.messageId, source_id: 'source-default', n: 1 }]);
    expect(await tablesOf(expectedSchema)).toEqual(['_tributary_tables', 'default_schema', 'tracks']);
    const publicTracksAfter = await inspector.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'default_schema'",
    );
    expect(publicTracksAfter.rows).toEqual(publicTracksBefore.rows);
  });

  it('gives two sources two schemas by default, each with its own users', async () => {
    const identify = (userId: string, plan: string) =>
      message({ type: 'identify', userId, traits: { plan } });
    const first = identify('same-user', 'first');
    const second = identify('same-user', 'second');
    for (const [slug, each] of [
      [`first_${suffix}`, first],
      [`second_${suffix}`, second],
    ] as const) {
      schemasToDrop.push(slug);
      const results = await adapter.deliver({
        settings: { connection_string: databaseUrl },
        sourceId: `id-${slug}`,
        sourceSlug: slug,
        messages: [each],
      });
      expect(results).toEqual([{ messageId: each.messageId, outcome: 'delivered' }]);
    }
    const firstUsers = await inspector.query(`SELECT id, plan FROM "first_${suffix}".users`);
    const secondUsers = await inspector.query(`SELECT id, plan FROM "second_${suffix}".users`);
    expect(firstUsers.rows).toEqual([{ id: 'same-user', plan: 'first' }]);
    expect(secondUsers.rows).toEqual([{ id: 'same-user', plan: 'second' }]);
  });

  it('leaves tables it did not create untouched, and says why', async () => {
    const schemaName = await newSchema('foreign');
    // Another application's tables in the same schema, with the names Tributary would use.
    await inspector.query(
      `CREATE TABLE "${schemaName}".users (id text PRIMARY KEY, email text NOT NULL, is_admin boolean NOT NULL)`,
    );
    await inspector.query(`INSERT INTO "${schemaName}".users VALUES ('user-1', 'owner@example.com', true)`);
    await inspector.query(
      `CREATE TABLE "${schemaName}".order_completed (id text PRIMARY KEY, total numeric)`,
    );
    await inspector.query(`CREATE VIEW "${schemaName}".pages AS SELECT 'x'::text AS id`);
    const columnsBefore = await inspector.query(
      'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2',
      [schemaName],
    );

    const identify = message({
      type: 'identify',
      userId: 'user-1',
      traits: { email: 'attacker@example.com', isAdmin: false },
    });
    const order = message({ type: 'track', event: 'Order Completed', properties: { total: 1, extra: 'x' } });
    const page = message({ type: 'page', name: 'Home' });
    const settings = { connection_string: databaseUrl, schema: schemaName };
    const results = await adapter.deliver({
      settings,
      sourceId: 'source-f',
      messages: [identify, order, page],
    });
    for (const [result, table] of [
      [results[0], 'users'],
      [results[1], 'order_completed'],
      [results[2], 'pages'],
    ] as const) {
      expect(result).toMatchObject({
        outcome: 'discard',
        cause: 'foreign_table',
        reason: expect.stringContaining(
          `table "${schemaName}"."${table}" exists but Tributary did not create it`,
        ),
      });
    }
    // Refused again on a later delivery: a discard, not a retry loop.
    const [again] = await adapter.deliver({ settings, sourceId: 'source-f', messages: [identify] });
    expect(again).toMatchObject({ outcome: 'discard', cause: 'foreign_table' });

    const users = await inspector.query(`SELECT * FROM "${schemaName}".users`);
    expect(users.rows).toEqual([{ id: 'user-1', email: 'owner@example.com', is_admin: true }]);
    expect((await inspector.query(`SELECT * FROM "${schemaName}".order_completed`)).rows).toEqual([]);
    const columnsAfter = await inspector.query(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name IN ('users', 'order_completed', 'pages') ORDER BY 1, 2`,
      [schemaName],
    );
    expect(columnsAfter.rows).toEqual(
      columnsBefore.rows.filter((row) => ['users', 'order_completed', 'pages'].includes(row.table_name)),
    );
    // The message's rows that belong in Tributary's own tables were not written either: all or nothing.
    expect(
      (
        await inspector
          .query(`SELECT count(*)::int AS n FROM "${schemaName}".identifies`)
          .catch(() => ({ rows: [{ n: 0 }] }))
      ).rows,
    ).toEqual([{ n: 0 }]);
    expect(
      (
        await inspector
          .query(`SELECT count(*)::int AS n FROM "${schemaName}".tracks`)
          .catch(() => ({ rows: [{ n: 0 }] }))
      ).rows,
    ).toEqual([{ n: 0 }]);
  });

  it('creates at most the configured number of event tables and refuses the next with a discard', async () => {
    const schemaName = await newSchema('tables');
    const settings = { connection_string: databaseUrl, schema: schemaName };
    const events = ['First Event', 'Second Event', 'Third Event'].map((event) =>
      message({ type: 'track', event, properties: { n: 1 } }),
    );
    const identify = message({ type: 'identify', traits: { plan: 'pro' } });
    const results = await adapter.deliver({
      settings,
      sourceId: 'source-t',
      messages: [...events, identify],
    });

    expect(results.map((result) => result.outcome)).toEqual([
      'delivered',
      'delivered',
      'discard',
      'delivered',
    ]);
    expect(results[2]).toMatchObject({
      cause: 'table_limit',
      reason: expect.stringContaining('already has 2 event tables'),
    });
    // Standard tables are not counted against the cap.
    expect(await tablesOf(schemaName)).toEqual([
      '_tributary_tables',
      'first_event',
      'identifies',
      'second_event',
      'tracks',
      'users',
    ]);
    // The refused message left no row in tracks either.
    const tracked = await inspector.query(`SELECT id FROM "${schemaName}".tracks ORDER BY id`);
    expect(tracked.rows.map((row) => row.id).sort()).toEqual(
      [events[0]!.messageId, events[1]!.messageId].sort(),
    );
    // Existing event tables still take new rows.
    const more = message({ type: 'track', event: 'First Event', properties: { n: 2 } });
    expect(await adapter.deliver({ settings, sourceId: 'source-t', messages: [more] })).toEqual([
      { messageId: more.messageId, outcome: 'delivered' },
    ]);
  });

  it('adds no column past the cap: the row lands without those values, which are reported', async () => {
    const schemaName = await newSchema('columns');
    const settings = { connection_string: databaseUrl, schema: schemaName };
    const properties = Object.fromEntries(
      Array.from({ length: 20 }, (_, index) => [`p${String(index).padStart(2, '0')}`, index]),
    );
    const wide = message({ type: 'track', event: 'Wide', properties, context: {} });
    const [result] = await adapter.deliver({ settings, sourceId: 'source-c', messages: [wide] });

    expect(result).toMatchObject({ outcome: 'delivered' });
    const notStored =
      (result as { valuesNotStored?: { cause: string; column: string }[] }).valuesNotStored ?? [];
    const columns = await inspector.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'wide'",
      [schemaName],
    );
    expect(columns.rows).toHaveLength(20);
    const stored = new Set(columns.rows.map((row) => row.column_name));
    const missing = Object.keys(properties).filter((key) => !stored.has(key));
    expect(missing.length).toBeGreaterThan(0);
    expect(notStored).toEqual(
      missing.map((column) => expect.objectContaining({ cause: 'column_limit', table: 'wide', column })),
    );
    const [row] = (await inspector.query(`SELECT * FROM "${schemaName}".wide`)).rows;
    expect(row).toMatchObject({ id: wide.messageId, p00: 0 });

    // Later messages still land, their known columns filled and new ones still left out.
    const later = message({
      type: 'track',
      event: 'Wide',
      properties: { p00: 7, brandNew: 'x' },
      context: {},
    });
    const [laterResult] = await adapter.deliver({ settings, sourceId: 'source-c', messages: [later] });
    expect(laterResult).toMatchObject({
      outcome: 'delivered',
      valuesNotStored: [expect.objectContaining({ cause: 'column_limit', column: 'brand_new' })],
    });
    expect(
      (await inspector.query(`SELECT p00 FROM "${schemaName}".wide WHERE id = $1`, [later.messageId])).rows,
    ).toEqual([{ p00: 7 }]);
  });
});

describe('PostgresDeliveryAdapter pools', () => {
  const lruSchema = `${schema}_lru`;
  const applicationName = `tributary_lru_${process.pid}`;
  const inspector = new Client({ connectionString: databaseUrl });

  beforeAll(async () => {
    await inspector.connect();
  });

  afterAll(async () => {
    await inspector.query(`DROP SCHEMA IF EXISTS "${lruSchema}" CASCADE`).catch(() => undefined);
    await inspector.end().catch(() => undefined);
  });

  async function connectionsOpen(): Promise<number> {
    const result = await inspector.query<{ count: string }>(
      'SELECT count(*) AS count FROM pg_stat_activity WHERE application_name LIKE $1',
      [`${applicationName}%`],
    );
    return Number(result.rows[0].count);
  }

  it('keeps at most maxPools open, closing the least recently used (and its connections)', async () => {
    const adapter = new PostgresDeliveryAdapter({ connectionTimeoutMs: 2_000, maxPools: 3 });
    try {
      const separator = databaseUrl.includes('?') ? '&' : '?';
      // Each distinct connection string is a pool of its own: a tenant may change it at will.
      for (let index = 0; index < 8; index++) {
        const settings = {
          connection_string: `${databaseUrl}${separator}application_name=${applicationName}_${index}`,
          schema: lruSchema,
        };
        const [result] = await adapter.deliver({ settings, messages: [message({ type: 'identify' })] });
        expect(result.outcome).toBe('delivered');
      }
      expect(adapter['warehouses'].size).toBe(3);
      // The evicted pools' connections are closed, not left idle in the database.
      const deadline = Date.now() + 10_000;
      while ((await connectionsOpen()) > 3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await connectionsOpen()).toBeLessThanOrEqual(3);
    } finally {
      await adapter.close();
    }
  });
});
