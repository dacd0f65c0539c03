/**
 * The PostgreSQL destination draining a backlog, against a raw `pg` client writing the same rows.
 *
 * Under live load the destination keeps up with `/v1/batch`, so rows per second over the load would
 * measure the ingest rate, not the router. So the phase builds a backlog first and times its drain:
 * 1. a source with a postgres destination; one message of every bench message shape is delivered,
 *    which creates the schema, its tables and their columns before anything is timed;
 * 2. the destination is disabled (its consumer then acknowledges every message as skipped, so it
 *    builds no backlog of its own), and `messages` messages are ingested through `/v1/batch`, untimed;
 *    the phase waits until the consumer has skipped them all, so the drain has the machine to itself;
 * 3. a replay of that history into the destination is requested through the Config API (a replay
 *    sends to a disabled destination), and the phase polls the tables' row counts: the drain is
 *    timed from the replay request to the poll that first saw the last row (the replay COMPLETED
 *    means every message was acknowledged, so every row was written by then).
 * The router's rows/s (rows the replay added over that span) is compared with a plain `pg` client
 * inserting the very same rows (read back from that schema) into copies of its tables: multi-row
 * INSERTs of `ROUTER_MAX_IN_FLIGHT` rows, one transaction each, on as many connections as the
 * adapter's pool. After both, a bare router (`postgres-floor.phase.ts`) writes the same rows from the
 * same stored messages, and nothing else: the floor the drain is measured against as well.
 */
import { Client, Pool } from 'pg';
import { BatchPoster } from './batch-poster';
import { createBenchMessages } from './bench-messages';
import type { ReplayResource } from '@tributary/contracts';
import type { ConfigApiClient } from '../support/config-api.client';
import {
  createPostgresDestination,
  createSource,
  deliveryCounts,
  replayOf,
  requestReplay,
  setDestinationEnabled,
  sourceIdOf,
} from './bench-resources';
import { round } from './load-loop';
import { measurePostgresFloor } from './postgres-floor.phase';

const REGISTRY_TABLE = '_tributary_tables';
const POOL_CONNECTIONS = 4;
const POLL_MS = 100;
/** Row counts during the drain: the span's resolution. */
const POLL_ROWS_MS = 50;
const DESTINATION = 'postgres';
/** Segment's warehouse schema: every message has exactly one row, keyed by its messageId, in one of these. */
const PRIMARY_TABLES = ['tracks', 'identifies', 'pages', 'screens', 'groups', 'aliases'];

/** One drain and the raw insert after it. */
export interface PostgresRound {
  /** Messages whose row is in the tables after the drain (their primary rows): every message of the backlog. */
  messagesStored: number;
  /** Rows of `tracks`, and of the tables of single events, where each track message has a row as well. */
  trackRows: number;
  eventRows: number;
  /** Messages the replay delivered (its own count). */
  deliveredMessages: number;
  replayState: string;
  /** Rows the replay added to the destination's tables. */
  rows: number;
  /** From the replay request to the first row written, and to the last. */
  firstRowSeconds: number | null;
  spanSeconds: number;
  rowsPerSecond: number;
  /** The server's CPU time over the drain per 1,000 replayed messages: steadier than rows/s on a shared machine. */
  serverCpuMsPerThousandMessages: number | null;
  ceiling: { rows: number; seconds: number; rowsPerSecond: number };
  ratio: number;
  /** The bare router's write of the same rows (`postgres-floor.phase.ts`); null when not measured. */
  floor: PostgresFloorRound | null;
}

export interface PostgresFloorRound {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** CPU µs per message: the floor's process and nats-server; null off Linux. */
  cpuUs: { router: number; natsServer: number } | null;
  /** floor over the raw insert: what `ratio postgres/ceiling` could read were the router's own work free. */
  ratio: number;
}

/** The median round by ratio, every round, and what went wrong (the run fails on any). */
export interface PostgresPhaseResult extends PostgresRound {
  /** Messages ingested into the backlog (the probe not included). */
  acceptedMessages: number;
  rounds: PostgresRound[];
  failures: string[];
}

export async function measurePostgres(options: {
  api: ConfigApiClient;
  workspace: string;
  baseUrl: string;
  databaseUrl: string;
  rowsPerStatement: number;
  /** Messages in the backlog the router drains. */
  messages: number;
  /** Drains of that backlog, each followed by the raw insert of its rows; the median round is reported. */
  rounds: number;
  /** Told each round's figures as it ends. */
  onRound?: (round: number, figures: PostgresRound) => void;
  settings: { concurrency: number; batchSize: number; drainTimeoutSeconds: number };
  /** The server process's CPU time so far (user + system), when it can be read. */
  serverCpuTimeMs: () => number | null;
  /** Called when the timed drain starts and when it ends (the server's CPU profile covers the drain). */
  drain?: { started(): void; finished(): Promise<void> };
  /** The log the floor reads (and nats-server's process, for its CPU); absent: no floor. */
  floor?: { natsUrl: string; natsPid: number };
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
    const writeKey = await createSource(api, workspace, source);
    await createPostgresDestination(api, workspace, source, {
      connectionString: options.databaseUrl,
      schema,
    });
    const messages = createBenchMessages(writeKey);
    const poster = new BatchPoster(options.baseUrl, writeKey, settings.concurrency);
    const counts = () => deliveryCounts(api, workspace, source, DESTINATION);
    try {
      // The probe: one message of every shape the bench sends, so the schema, every table and every
      // column exist before the clock runs (the drain writes rows, it does not create tables).
      const probeMessages = await ingest(
        poster,
        (size) => messages.batchBody(size),
        messages.templateCount,
        settings,
      );
      await until('the postgres destination did not deliver the probe', 60_000, async () => {
        return ((await counts()).delivered ?? 0) >= probeMessages;
      });

      // The backlog: history the destination has not received.
      await setDestinationEnabled(api, workspace, source, DESTINATION, false);
      const backlogFrom = new Date();
      const acceptedMessages = await ingest(
        poster,
        (size) => messages.batchBody(size),
        options.messages,
        settings,
      );
      await until('the disabled destination did not skip the backlog', 60_000, async () => {
        return ((await counts()).skipped ?? 0) >= acceptedMessages;
      });
      const tables = await tablesOf(admin, schema);

      // BENCH_ROUNDS rounds of the drain and the raw insert, each from empty tables (the probe's rows
      // too are gone, so every round writes the same rows), the median round by ratio reported.
      const rounds: PostgresRound[] = [];
      for (let round_ = 1; round_ <= options.rounds; round_ += 1) {
        await admin.query(`TRUNCATE ${tables.map((table) => `"${schema}"."${table}"`).join(', ')}`);
        const drain = await timeDrain(options, admin, schema, tables, backlogFrom);
        const ceiling = await rawInsertCeiling(
          admin,
          options.databaseUrl,
          schema,
          rawSchema,
          tables,
          options.rowsPerStatement,
        );
        const ratio = ceiling.rowsPerSecond > 0 ? round(drain.rowsPerSecond / ceiling.rowsPerSecond, 3) : 0;
        const floor = options.floor
          ? await floorRound(
              {
                ...options.floor,
                databaseUrl: options.databaseUrl,
                admin,
                name: `bench-postgres-floor-${process.pid}-${round_}`,
                sourceId: await sourceIdOf(api, workspace, source),
                from: backlogFrom,
                drainedSchema: schema,
                floorSchema: rawSchema,
                tables,
              },
              ceiling.rowsPerSecond,
            )
          : null;
        options.onRound?.(round_, { ...drain, ceiling, ratio, floor });
        rounds.push({ ...drain, ceiling, ratio, floor });
      }
      const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)]!;
      const failures = [
        ...rounds.flatMap((entry, index) => [
          ...(entry.replayState === 'COMPLETED'
            ? []
            : [`postgres round ${index + 1}: the replay ended ${entry.replayState}`]),
          ...(entry.deliveredMessages < acceptedMessages
            ? [
                `postgres round ${index + 1}: the replay delivered ${entry.deliveredMessages} of ${acceptedMessages} messages`,
              ]
            : []),
          ...(entry.messagesStored === acceptedMessages
            ? []
            : [
                `postgres round ${index + 1}: the tables hold ${entry.messagesStored} of the ${acceptedMessages} messages replayed into them`,
              ]),
          ...(entry.eventRows === entry.trackRows
            ? []
            : [
                `postgres round ${index + 1}: ${entry.trackRows} rows in tracks but ${entry.eventRows} in the tables of single events`,
              ]),
          // Every round writes the same messages into empty tables: fewer rows is a lost message.
          ...(entry.rows !== rounds[0]!.rows
            ? [`postgres round ${index + 1}: ${entry.rows} rows written, round 1 wrote ${rounds[0]!.rows}`]
            : []),
          ...(entry.ceiling.rows !== entry.rows
            ? [
                `postgres round ${index + 1}: the raw insert wrote ${entry.ceiling.rows} of ${entry.rows} rows`,
              ]
            : []),
          ...(entry.floor && entry.floor.rows !== entry.rows
            ? [`postgres round ${index + 1}: the floor wrote ${entry.floor.rows} of ${entry.rows} rows`]
            : []),
        ]),
      ];
      return { acceptedMessages, ...median, rounds, failures };
    } finally {
      poster.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${rawSchema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** One drain of the backlog into the destination by a replay, timed from its request to the last row. */
async function timeDrain(
  options: Parameters<typeof measurePostgres>[0],
  admin: Client,
  schema: string,
  tables: string[],
  backlogFrom: Date,
): Promise<Omit<PostgresRound, 'ceiling' | 'ratio' | 'floor'>> {
  const { api, workspace, settings } = options;
  const source = 'warehouse';
  const rowsBefore = await countAllRows(admin, schema, tables);
  options.drain?.started();
  const cpuBefore = options.serverCpuTimeMs();
  const requestedAt = Date.now();
  const deadline = requestedAt + settings.drainTimeoutSeconds * 1000;
  const replayId = await requestReplay(api, workspace, source, DESTINATION, backlogFrom);
  let replay: ReplayResource = await replayOf(api, workspace, source, DESTINATION, replayId);
  let rowsSeen = rowsBefore;
  let firstRowAt: number | null = null;
  let lastRowAt = requestedAt;
  const look = async () => {
    const rows = await countAllRows(admin, schema, tables);
    if (rows > rowsSeen) {
      const now = Date.now();
      firstRowAt ??= now;
      lastRowAt = now;
      rowsSeen = rows;
    }
  };
  while (replay.state === 'RUNNING' && Date.now() < deadline) {
    await sleep(POLL_ROWS_MS);
    await look();
    replay = await replayOf(api, workspace, source, DESTINATION, replayId);
  }
  // Acknowledged means written: rows the last poll missed were written before COMPLETED showed.
  await look();
  const cpuAfter = options.serverCpuTimeMs();
  await options.drain?.finished();
  // What the tables hold now, not the highest count seen: a row that went missing shows here.
  const rows = (await countAllRows(admin, schema, tables)) - rowsBefore;
  const messagesStored = await countAllRows(
    admin,
    schema,
    tables.filter((table) => PRIMARY_TABLES.includes(table)),
  );
  const trackRows = await countAllRows(admin, schema, tables.includes('tracks') ? ['tracks'] : []);
  const eventRows = await countAllRows(
    admin,
    schema,
    tables.filter((table) => !PRIMARY_TABLES.includes(table) && table !== 'users'),
  );
  const spanSeconds = (lastRowAt - requestedAt) / 1000;
  const deliveredMessages = replay.counts?.delivered ?? 0;
  return {
    messagesStored,
    trackRows,
    eventRows,
    deliveredMessages,
    replayState: replay.state,
    rows,
    firstRowSeconds: firstRowAt === null ? null : round((firstRowAt - requestedAt) / 1000, 3),
    spanSeconds: round(spanSeconds, 3),
    rowsPerSecond: spanSeconds > 0 ? Math.round(rows / spanSeconds) : 0,
    serverCpuMsPerThousandMessages:
      cpuBefore === null || cpuAfter === null || deliveredMessages === 0
        ? null
        : round(((cpuAfter - cpuBefore) / deliveredMessages) * 1000, 1),
  };
}

/** The floor's write of the drained rows into the raw insert's tables, and what those hold after it. */
async function floorRound(
  options: Parameters<typeof measurePostgresFloor>[0],
  ceilingRowsPerSecond: number,
): Promise<PostgresFloorRound> {
  const floor = await measurePostgresFloor(options);
  const rows = await countAllRows(options.admin, options.floorSchema, options.tables);
  const rowsPerSecond = floor.seconds > 0 ? Math.round(rows / floor.seconds) : 0;
  return {
    rows,
    seconds: floor.seconds,
    rowsPerSecond,
    cpuUs: floor.cpuUs,
    ratio: ceilingRowsPerSecond > 0 ? round(rowsPerSecond / ceilingRowsPerSecond, 3) : 0,
  };
}

/** Posts batches, `concurrency` at a time, until `total` messages are stored; resolves to how many were. */
async function ingest(
  poster: BatchPoster,
  batchBody: (size: number) => string,
  total: number,
  settings: { concurrency: number; batchSize: number },
): Promise<number> {
  let requested = 0;
  let accepted = 0;
  const worker = async () => {
    while (requested < total) {
      const size = Math.min(settings.batchSize, total - requested);
      requested += size;
      const stored = await poster.send(batchBody(size), size);
      accepted += stored;
    }
  };
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
  return accepted;
}

async function rawInsertCeiling(
  admin: Client,
  databaseUrl: string,
  schema: string,
  rawSchema: string,
  tables: string[],
  rowsPerStatement: number,
): Promise<{ rows: number; seconds: number; rowsPerSecond: number }> {
  await admin.query(`DROP SCHEMA IF EXISTS "${rawSchema}" CASCADE`);
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

/** Rows of every table of the schema, in one statement. */
async function countAllRows(admin: Client, schema: string, tables: string[]): Promise<number> {
  if (tables.length === 0) return 0;
  const counts = tables.map((table) => `(SELECT count(*) FROM "${schema}"."${table}")`).join(' + ');
  const result = await admin.query<{ rows: string }>(`SELECT ${counts} AS rows`);
  return Number(result.rows[0]!.rows);
}

async function until(what: string, timeoutMs: number, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
