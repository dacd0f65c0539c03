/**
 * The PostgreSQL destination against a raw `pg` client writing the same rows. A source with a
 * postgres destination gets `/v1/batch` load; its delivered rows per second (every row of every table
 * of its schema, over first to last delivery) are compared with a plain `pg` client inserting the
 * very same rows (read back from that schema) into copies of its tables: multi-row INSERTs of
 * `ROUTER_MAX_IN_FLIGHT` rows, one transaction each, on as many connections as the adapter's pool.
 */
import { Client, Pool } from 'pg';
import { BatchPoster } from './batch-poster';
import { createBenchMessages } from './bench-messages';
import type { BenchConfigApi } from './config-api.client';
import { round, runClosedLoop } from './load-loop';

const REGISTRY_TABLE = '_tributary_tables';
const POOL_CONNECTIONS = 4;
const POLL_MS = 100;

export interface PostgresPhaseResult {
  acceptedMessages: number;
  deliveredMessages: number;
  rows: number;
  spanSeconds: number;
  rowsPerSecond: number;
  ceiling: { rows: number; seconds: number; rowsPerSecond: number };
  ratio: number;
}

export async function measurePostgres(options: {
  api: BenchConfigApi;
  workspace: string;
  baseUrl: string;
  databaseUrl: string;
  rowsPerStatement: number;
  settings: { seconds: number; concurrency: number; batchSize: number; drainTimeoutSeconds: number };
}): Promise<PostgresPhaseResult | string> {
  const { api, workspace, settings } = options;
  const admin = new Client({ connectionString: options.databaseUrl });
  try {
    await admin.connect();
  } catch (error) {
    return `PostgreSQL not reachable at ${options.databaseUrl}: ${(error as Error).message}`;
  }
  const schema = `bench_delivered_${process.pid}`;
  const rawSchema = `bench_raw_${process.pid}`;
  try {
    const source = 'warehouse';
    const writeKey = await api.createSource(workspace, source);
    await api.createPostgresDestination(workspace, source, { connectionString: options.databaseUrl, schema });
    const messages = createBenchMessages(writeKey);
    const poster = new BatchPoster(options.baseUrl, writeKey, settings.concurrency);
    const delivered = () =>
      api.deliveryCounts(workspace, source, 'postgres').then((counts) => counts.delivered ?? 0);
    try {
      // The probe: the schema and its tables exist before the clock runs.
      await poster.send(messages.batchBody(1), 1);
      await until(async () => (await delivered()) >= 1, 30_000);
      const ingest = await runClosedLoop({
        concurrency: settings.concurrency,
        warmupSeconds: 0,
        seconds: settings.seconds,
        send: () => poster.send(messages.batchBody(settings.batchSize), settings.batchSize),
      });
      const target = 1 + ingest.acceptedMessages;
      // From the start of the load (nothing was pending then) to the last delivery, seen by polling.
      const firstAt = Date.now() - ingest.seconds * 1000;
      const deadline = Date.now() + settings.drainTimeoutSeconds * 1000;
      let count = 0;
      while (Date.now() < deadline) {
        count = await delivered();
        if (count >= target) break;
        await sleep(POLL_MS);
      }
      const lastAt = Date.now();
      const tables = await tablesOf(admin, schema);
      let rows = 0;
      for (const table of tables) rows += await countRows(admin, schema, table);
      const spanSeconds = (lastAt - firstAt) / 1000;

      const ceiling = await rawInsertCeiling(
        admin,
        options.databaseUrl,
        schema,
        rawSchema,
        tables,
        options.rowsPerStatement,
      );
      const rowsPerSecond = spanSeconds > 0 ? Math.round(rows / spanSeconds) : 0;
      return {
        acceptedMessages: ingest.acceptedMessages,
        deliveredMessages: count - 1,
        rows,
        spanSeconds: round(spanSeconds, 3),
        rowsPerSecond,
        ceiling,
        ratio: ceiling.rowsPerSecond > 0 ? round(rowsPerSecond / ceiling.rowsPerSecond, 3) : 0,
      };
    } finally {
      poster.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${rawSchema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

async function rawInsertCeiling(
  admin: Client,
  databaseUrl: string,
  schema: string,
  rawSchema: string,
  tables: string[],
  rowsPerStatement: number,
): Promise<{ rows: number; seconds: number; rowsPerSecond: number }> {
  await admin.query(`CREATE SCHEMA "${rawSchema}"`);
  const work: Array<{ table: string; columns: string[]; rows: unknown[][] }> = [];
  for (const table of tables) {
    await admin.query(`CREATE TABLE "${rawSchema}"."${table}" (LIKE "${schema}"."${table}" INCLUDING ALL)`);
    const result = await admin.query({ text: `SELECT * FROM "${schema}"."${table}"`, rowMode: 'array' });
    const columns = result.fields.map((field) => field.name);
    for (let start = 0; start < result.rows.length; start += rowsPerStatement) {
      work.push({ table, columns, rows: result.rows.slice(start, start + rowsPerStatement) as unknown[][] });
    }
  }
  const pool = new Pool({ connectionString: databaseUrl, max: POOL_CONNECTIONS });
  try {
    let next = 0;
    let rows = 0;
    const startedAt = Date.now();
    const worker = async () => {
      const client = await pool.connect();
      try {
        while (next < work.length) {
          const chunk = work[next++]!;
          const width = chunk.columns.length;
          const values = chunk.rows
            .map(
              (_, row) => `(${chunk.columns.map((__, column) => `$${row * width + column + 1}`).join(', ')})`,
            )
            .join(', ');
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO "${rawSchema}"."${chunk.table}" (${chunk.columns.map((column) => `"${column}"`).join(', ')}) ` +
              `VALUES ${values} ON CONFLICT DO NOTHING`,
            chunk.rows.flat(),
          );
          await client.query('COMMIT');
          rows += chunk.rows.length;
        }
      } finally {
        client.release();
      }
    };
    await Promise.all(Array.from({ length: POOL_CONNECTIONS }, worker));
    const seconds = (Date.now() - startedAt) / 1000;
    return { rows, seconds: round(seconds, 3), rowsPerSecond: seconds > 0 ? Math.round(rows / seconds) : 0 };
  } finally {
    await pool.end();
  }
}

async function tablesOf(admin: Client, schema: string): Promise<string[]> {
  const result = await admin.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> $2 ORDER BY 1`,
    [schema, REGISTRY_TABLE],
  );
  return result.rows.map((row) => row.table_name);
}

async function countRows(admin: Client, schema: string, table: string): Promise<number> {
  const result = await admin.query<{ count: string }>(`SELECT count(*) FROM "${schema}"."${table}"`);
  return Number(result.rows[0]!.count);
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`the postgres destination delivered nothing within ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
