/**
 * The PostgreSQL floor: how fast a router that does nothing but read a source's stored messages from
 * JetStream, write their rows and ack them (`postgres-floor.consumer.ts`, a process of its own as the
 * router is) fills a warehouse. Every router does at least that much, so its ratio to the raw insert
 * bounds what `ratio postgres/ceiling` can read on the machine; the drain over it says how much of what
 * is possible the router keeps.
 *
 * Its rows are the drain's own, read back as PostgreSQL prints them: the floor does not plan rows (the
 * router must), it only writes them, with each message's rows in the transaction that commits before
 * the message is acked. A user's row goes with the first identify of that user, so the floor writes
 * exactly the rows the drain left. It writes into the raw insert's copies of the tables, emptied first.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, CustomTypesConfig } from 'pg';
import { postgresDefinition } from '@tributary/destinations';
import { cpuUsPerMessage, runFloorProcess } from './floor-process';
import { round } from './load-loop';
import { processCpuTimeMs } from './tributary-server.process';

/** What the floor writes: each table's columns, and each message's rows (by table index), as text. */
export interface FloorRows {
  tables: Array<{ name: string; columns: string[] }>;
  byMessage: Record<string, Array<[table: number, values: Array<string | null>]>>;
}

export interface PostgresFloorResult {
  /** From the floor's first read to its last ack. */
  seconds: number;
  /** CPU µs per message: the floor's process and nats-server; null off Linux. */
  cpuUs: { router: number; natsServer: number } | null;
}

/** Every value as PostgreSQL prints it: the floor sends text, which PostgreSQL reads by column type. */
const AS_TEXT = { getTypeParser: () => (value: string) => value } as unknown as CustomTypesConfig;

/** The drained tables' rows, by the message each belongs to. */
async function floorRowsOf(admin: Client, schema: string, tables: string[]): Promise<FloorRows> {
  const floor: FloorRows = { tables: [], byMessage: {} };
  const firstIdentifyOf = new Map<string, string>();
  const users: Array<{ table: number; values: Array<string | null>; userId: string }> = [];
  for (const name of tables) {
    const result = await admin.query<Array<string | null>>({
      text: `SELECT * FROM "${schema}"."${name}"`,
      rowMode: 'array',
      types: AS_TEXT,
    });
    const columns = result.fields.map((field) => field.name);
    const table = floor.tables.push({ name, columns }) - 1;
    const id = columns.indexOf('id');
    const userIdColumn = columns.indexOf('user_id');
    for (const values of result.rows) {
      if (name === 'users') {
        users.push({ table, values, userId: values[id]! });
        continue;
      }
      const messageId = values[id]!;
      (floor.byMessage[messageId] ??= []).push([table, values]);
      if (name === 'identifies' && values[userIdColumn] && !firstIdentifyOf.has(values[userIdColumn]))
        firstIdentifyOf.set(values[userIdColumn], messageId);
    }
  }
  for (const { table, values, userId } of users) {
    const messageId = firstIdentifyOf.get(userId);
    if (messageId === undefined) throw new Error(`user ${userId} has a row but no identify`);
    floor.byMessage[messageId]!.push([table, values]);
  }
  return floor;
}

export async function measurePostgresFloor(options: {
  natsUrl: string;
  natsPid: number;
  databaseUrl: string;
  admin: Client;
  /** Of its consumers (deleted once read): unique in the stream. */
  name: string;
  sourceId: string;
  /** Where its consumers start: the drain's replay start. */
  from: Date;
  /** The drained tables, whose rows it writes, and the schema of their empty copies it writes them to. */
  drainedSchema: string;
  floorSchema: string;
  tables: string[];
}): Promise<PostgresFloorResult> {
  const { admin, floorSchema, tables } = options;
  const rows = await floorRowsOf(admin, options.drainedSchema, tables);
  const messages = Object.keys(rows.byMessage).length;
  const folder = mkdtempSync(join(tmpdir(), 'tributary-postgres-floor-'));
  try {
    const rowsFile = join(folder, 'rows.json');
    writeFileSync(rowsFile, JSON.stringify(rows));
    await admin.query(`TRUNCATE ${tables.map((table) => `"${floorSchema}"."${table}"`).join(', ')}`);
    const { before, after, doneLine } = await runFloorProcess(
      'postgres-floor.consumer.ts',
      {
        NATS_URL: options.natsUrl,
        DATABASE_URL: options.databaseUrl,
        NAME: options.name,
        SOURCE_ID: options.sourceId,
        FROM: options.from.toISOString(),
        ROWS_FILE: rowsFile,
        SCHEMA: floorSchema,
        // As the destination gathers them: messages per call, calls at once.
        BATCH: String(postgresDefinition.gathering!.maxMessages),
        CONNECTIONS: String(postgresDefinition.gathering!.callsAtOnce),
      },
      (floorPid) => ({ router: processCpuTimeMs(floorPid), natsServer: processCpuTimeMs(options.natsPid) }),
    );
    const router = cpuUsPerMessage(before.router, after.router, messages);
    const natsServer = cpuUsPerMessage(before.natsServer, after.natsServer, messages);
    return {
      seconds: round(Number(doneLine.split(' ')[1]), 3),
      cpuUs: router === null || natsServer === null ? null : { router, natsServer },
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
