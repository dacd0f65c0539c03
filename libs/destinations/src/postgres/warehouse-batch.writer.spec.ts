/**
 * Against the real PostgreSQL (`TEST_DATABASE_URL`, as in `postgres.adapter.spec.ts`): the batch writer
 * stores the same rows whether each group of rows goes as JSON (`valuesAsJson`) or as parameters.
 */
import { randomUUID } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import {
  writeWarehouseBatch,
  writesInOneStatement,
  type BatchMessageRows,
  type BatchRow,
} from './warehouse-batch.writer';
import type { WarehouseValue } from './warehouse-row.planner';

const databaseUrl = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suffix = `${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
const asParameters = `tributary_batch_parameters_${suffix}`;
const asJson = `tributary_batch_json_${suffix}`;

const TABLES = [
  'CREATE TABLE %s.tracks (id text PRIMARY KEY, received_at timestamptz, user_id text, event text, ' +
    'uuid_ts timestamptz NOT NULL DEFAULT now())',
  'CREATE TABLE %s."order ""completed""" (id text PRIMARY KEY, received_at timestamptz, total double precision, ' +
    'paid boolean, label text, at timestamptz, uuid_ts timestamptz NOT NULL DEFAULT now())',
  'CREATE TABLE %s.identifies (id text PRIMARY KEY, received_at timestamptz, user_id text, plan text, logins double precision, ' +
    'uuid_ts timestamptz NOT NULL DEFAULT now())',
  'CREATE TABLE %s.users (id text NOT NULL, source_id text NOT NULL, received_at timestamptz, plan text, ' +
    'logins double precision, uuid_ts timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id, source_id))',
];

const row = (table: string, values: Record<string, WarehouseValue | null>): BatchRow => ({
  table,
  values: { ...values },
});

const track = (
  id: string,
  event: Record<string, WarehouseValue | null>,
  receivedAt = '2026-01-02T03:04:05.678Z',
): BatchMessageRows => ({
  primary: row('tracks', { id, received_at: receivedAt, user_id: 'user "1"', event: 'order_completed' }),
  eventRow: row('order "completed"', { id, received_at: receivedAt, ...event }),
});

const identify = (
  id: string,
  userId: string,
  receivedAt: string,
  traits: Record<string, WarehouseValue>,
) => ({
  primary: row('identifies', { id, received_at: receivedAt, user_id: userId, ...traits }),
  userRow: row('users', { id: userId, source_id: 'src', received_at: receivedAt, ...traits }),
});

describe('writeWarehouseBatch against a real PostgreSQL', () => {
  const pool = new Pool({ connectionString: databaseUrl, max: 1, options: '-c TimeZone=UTC' });
  let client: PoolClient;

  beforeAll(async () => {
    client = await pool.connect();
    for (const schema of [asParameters, asJson]) {
      await client.query(`CREATE SCHEMA "${schema}"`);
      for (const table of TABLES) await client.query(table.replace('%s', `"${schema}"`));
    }
  });

  afterAll(async () => {
    for (const schema of [asParameters, asJson])
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    client.release();
    await pool.end();
  });

  async function write(schema: string, batch: BatchMessageRows[], valuesAsJson: boolean) {
    await client.query('BEGIN');
    try {
      const isNew = await writeWarehouseBatch(client, schema, batch, { valuesAsJson });
      await client.query('COMMIT');
      return isNew;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  }

  /** Every table's rows by id, without `uuid_ts` (the time of the write). */
  async function contentsOf(schema: string) {
    const contents: Record<string, unknown[]> = {};
    for (const table of ['tracks', 'order "completed"', 'identifies', 'users']) {
      const result = await client.query(
        `SELECT * FROM "${schema}"."${table.replace(/"/g, '""')}" ORDER BY id, 2`,
      );
      contents[table] = result.rows.map(({ uuid_ts: _, ...rest }) => rest);
    }
    return contents;
  }

  it('stores the same rows and answers the same newness as JSON as with parameters, redeliveries included', async () => {
    const tricky = [
      { total: 12.5, paid: true, label: `it's "quoted" \\ back\\slashed`, at: '2026-01-02T03:04:05+02:00' },
      { total: '0012.50', paid: false, label: 'Größe 🚀 ünïcödé\n\ttabs', at: '2026-01-02 03:04:05' },
      { total: 1e21, paid: null, label: '', at: '2026-01-02T03:04:05.123456Z' },
      { total: -0.000001, paid: true, label: '{"json":"text"}', at: null },
      { total: null, paid: null, label: null, at: null },
    ];
    const tracks = tricky.map((event) => track(randomUUID(), event));
    const batch: BatchMessageRows[] = [
      ...tracks,
      identify(randomUUID(), 'user-a', '2026-01-02T00:00:00.000Z', { plan: 'newer', logins: 3 }),
      identify(randomUUID(), 'user-a', '2026-01-01T00:00:00.000Z', { plan: 'older', logins: 1 }),
      identify(randomUUID(), 'user-b', '2026-01-01T00:00:00.000Z', { plan: 'only' }),
      // The same message twice in one batch: the first counts.
      tracks[0]!,
    ];
    const newWithParameters = await write(asParameters, batch, false);
    const newAsJson = await write(asJson, batch, true);
    expect(newAsJson).toEqual(newWithParameters);
    expect(newAsJson).toEqual([true, true, true, true, true, true, true, true, false]);
    const stored = await contentsOf(asParameters);
    expect(await contentsOf(asJson)).toEqual(stored);
    expect(stored['users']).toEqual([
      expect.objectContaining({ id: 'user-a', plan: 'newer', logins: 3 }),
      expect.objectContaining({ id: 'user-b', plan: 'only', logins: null }),
    ]);

    // Delivered again, with other content (even another event table for a track): nothing changes.
    const redelivered: BatchMessageRows[] = [
      ...tracks.map((each) => ({
        ...each,
        eventRow: row('order "completed"', { id: String(each.primary.values['id']), total: -1 }),
      })),
      { ...batch[5]!, userRow: row('users', { id: 'user-a', source_id: 'src', plan: 'changed' }) },
    ];
    for (const [schema, valuesAsJson] of [
      [asParameters, false],
      [asJson, true],
    ] as const) {
      expect(await write(schema, redelivered, valuesAsJson)).toEqual(redelivered.map(() => false));
      expect(await contentsOf(schema)).toEqual(stored);
    }
  });

  it('upserts users in the one statement when each has one row, only for the messages it inserted', async () => {
    const stored = identify(randomUUID(), 'user-e', '2026-02-01T00:00:00.000Z', { plan: 'stored' });
    const later = identify(randomUUID(), 'user-c', '2026-02-03T00:00:00.000Z', { plan: 'later' });
    const first = [stored, later];
    const second: BatchMessageRows[] = [
      // Older than the stored identify of user-c: the users row keeps the later one.
      identify(randomUUID(), 'user-c', '2026-02-02T00:00:00.000Z', { plan: 'older', logins: 7 }),
      identify(randomUUID(), 'user-d', '2026-02-02T00:00:00.000Z', { plan: 'new' }),
      track(randomUUID(), { total: 3 }),
      // Delivered again with other, later traits: not a new message, so its user is left alone.
      {
        primary: stored.primary,
        userRow: row('users', {
          id: 'user-e',
          source_id: 'src',
          received_at: '2026-03-01T00:00:00.000Z',
          plan: 'changed',
        }),
      },
    ];
    expect(writesInOneStatement(second, { valuesAsJson: true })).toBe(true);
    expect(writesInOneStatement(second, { valuesAsJson: false })).toBe(false);
    for (const [schema, valuesAsJson] of [
      [asParameters, false],
      [asJson, true],
    ] as const) {
      expect(await write(schema, first, valuesAsJson)).toEqual([true, true]);
      expect(await write(schema, second, valuesAsJson)).toEqual([true, true, true, false]);
    }
    const contents = await contentsOf(asParameters);
    expect(await contentsOf(asJson)).toEqual(contents);
    const users = Object.fromEntries(
      (contents['users'] as Array<Record<string, unknown>>).map((user) => [user['id'], user]),
    );
    expect(users['user-c']).toMatchObject({ plan: 'later' });
    expect(users['user-d']).toMatchObject({ plan: 'new' });
    expect(users['user-e']).toMatchObject({ plan: 'stored' });
  });

  it('fails as a whole when a value does not fit, as with parameters, so the caller goes one by one', async () => {
    const batch = [track(randomUUID(), { total: 'not a number' }), track(randomUUID(), { total: 1 })];
    await expect(write(asJson, batch, true)).rejects.toMatchObject({ code: '22P02' });
    await expect(write(asParameters, batch, false)).rejects.toMatchObject({ code: '22P02' });
    expect(await contentsOf(asJson)).toEqual(await contentsOf(asParameters));
  });
});
