// The PostgreSQL destination end to end, as a tenant would meet it: the source's own schema by default,
// system schemas refused by the Config API, tables Tributary did not create left alone, the event table
// limit, and type conflicts landing as null and counted in the destination's metrics and in Prometheus.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createDestination,
  deliveryMetrics,
  destinationName,
  openTestSchema,
  POLLING_ENVIRONMENT,
  sendBatch,
  TEST_DATABASE_URL,
  trackMessage,
  waitForSettled,
} from './router-e2e.kit';

/** The Prometheus exposition of the instance (its own metrics listener), as text. */
async function prometheusText(t: TributaryTestInstance): Promise<string> {
  const response = await fetch(t.metricsUrl);
  expect(response.status).toBe(200);
  return response.text();
}

function sampleValue(exposition: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const matches = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (matches) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('PostgreSQL destination end to end', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let database: Awaited<ReturnType<typeof openTestSchema>>;
  /** What the source's slug becomes as a schema name (`src-123-1` → `src_123_1`). */
  let sourceSchema: string;

  beforeAll(async () => {
    database = await openTestSchema();
    t = await startTributary({
      environment: { ...POLLING_ENVIRONMENT, POSTGRES_DESTINATION_MAX_TABLES: '2' },
    });
    source = await createWorkspaceAndSource(t);
    sourceSchema = source.sourceSlug.toLowerCase().replace(/-/g, '_');
    // Another application already uses the source's schema name, with a table Tributary would write to.
    await database.client.query(`DROP SCHEMA IF EXISTS "${sourceSchema}" CASCADE`);
    await database.client.query(`CREATE SCHEMA "${sourceSchema}"`);
    await database.client.query(
      `CREATE TABLE "${sourceSchema}".invoice_paid (id text PRIMARY KEY, amount numeric NOT NULL)`,
    );
    await database.client.query(`INSERT INTO "${sourceSchema}".invoice_paid VALUES ('theirs', 10)`);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await database?.client.query(`DROP SCHEMA IF EXISTS "${sourceSchema}" CASCADE`).catch(() => undefined);
    await database?.drop();
  });

  it('refuses a system schema at write time with 400 code 3', async () => {
    for (const schema of ['pg_catalog', 'information_schema', 'pg_toast']) {
      const response = await configApi(
        t,
        'POST',
        `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
        {
          destination: {
            name: destinationName(source, 'postgres'),
            enabled: true,
            config: [
              {
                name: `${destinationName(source, 'postgres')}/config/connection_string`,
                value: TEST_DATABASE_URL,
              },
              { name: `${destinationName(source, 'postgres')}/config/schema`, value: schema },
            ],
          },
        },
      );
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 3,
        message: expect.stringContaining(`schema "${schema}" is a PostgreSQL system schema`),
      });
    }
  });

  it("writes to the source's schema, leaves foreign tables alone, caps event tables and counts type conflicts", async () => {
    await createDestination(t, source, {
      slug: 'postgres',
      enabled: true,
      config: { connection_string: TEST_DATABASE_URL },
    });
    const name = destinationName(source, 'postgres');
    const created = await configApi(t, 'GET', name);
    // The schema setting is empty: the source's own schema.
    expect(created.body.config).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: `${name}/config/schema`, value: '' })]),
    );

    // One at a time, so which table is created first (and which one meets the limit) is known.
    const first = trackMessage({ event: 'Scored', properties: { score: 5 } });
    const conflict = trackMessage({ event: 'Scored', properties: { score: 'high' } });
    const foreign = trackMessage({ event: 'Invoice Paid', properties: { amount: 'a lot' } });
    const second = trackMessage({ event: 'Second Event', properties: { n: 1 } });
    const third = trackMessage({ event: 'Third Event', properties: { n: 1 } });
    const sequence = [first, conflict, foreign, second, third];
    for (const [index, message] of sequence.entries()) {
      await sendBatch(t, source, [message]);
      await waitForSettled(t, source, 'postgres', index + 1, 20_000);
    }

    const metrics = (await deliveryMetrics(t, source, 'postgres')) as Awaited<
      ReturnType<typeof deliveryMetrics>
    > &
      Record<string, any>;
    expect(metrics.counts).toMatchObject({ delivered: 3, discarded: 2, retried: 0, dead_lettered: 0 });
    expect(metrics['values_not_stored']).toEqual({ type_conflict: 1, column_limit: 0 });
    expect(metrics['recent_values_not_stored']).toEqual([
      {
        message_id: conflict.messageId,
        cause: 'type_conflict',
        table: 'scored',
        column: 'score',
        reason: expect.stringContaining('column "score" holds numbers, but the message has string "high"'),
        time: expect.any(String),
      },
    ]);
    expect(metrics['discards_by_cause']).toEqual({
      system_schema: 0,
      foreign_table: 1,
      table_limit: 1,
      egress_denied: 0,
    });
    expect(metrics.recent_discards.map((discard) => discard.message_id)).toEqual([
      foreign.messageId,
      third.messageId,
    ]);
    expect(metrics.recent_discards[0]!.reason).toContain(
      `table "${sourceSchema}"."invoice_paid" exists but Tributary did not create it`,
    );
    expect(metrics.recent_discards[1]!.reason).toContain('already has 2 event tables');

    // The rows: in the source's schema, the conflicting value as null, the foreign table untouched.
    const scored = await database.client.query(
      `SELECT id, score FROM "${sourceSchema}".scored ORDER BY received_at`,
    );
    expect(scored.rows).toEqual([
      { id: first.messageId, score: 5 },
      { id: conflict.messageId, score: null },
    ]);
    const theirs = await database.client.query(`SELECT * FROM "${sourceSchema}".invoice_paid`);
    expect(theirs.rows).toEqual([{ id: 'theirs', amount: '10' }]);
    const tables = await database.client.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [sourceSchema],
    );
    expect(tables.rows.map((row) => row.table_name)).toEqual([
      '_tributary_tables',
      'invoice_paid',
      'scored',
      'second_event',
      'tracks',
    ]);

    // Prometheus counts the same, per source and destination.
    const exposition = await prometheusText(t);
    const labels = { source_id: source.sourceId, destination: 'postgres' };
    expect(
      sampleValue(exposition, 'tributary_destination_values_not_stored_total', {
        ...labels,
        cause: 'type_conflict',
      }),
    ).toBe(1);
    expect(
      sampleValue(exposition, 'tributary_destination_refusals_total', { ...labels, cause: 'foreign_table' }),
    ).toBe(1);
    expect(
      sampleValue(exposition, 'tributary_destination_refusals_total', { ...labels, cause: 'table_limit' }),
    ).toBe(1);
  });
});
