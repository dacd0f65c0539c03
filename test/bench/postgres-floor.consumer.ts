/**
 * The PostgreSQL floor's router (`postgres-floor.phase.ts`): the least a router must do to write
 * stored messages into a warehouse, and nothing else. It reads one source's messages from the tracking
 * log, through the project's own event log as the router does (acks coalesced and unconfirmed),
 * parses each one, looks its rows up in the rows the drain wrote (given, as PostgreSQL printed them,
 * in `ROWS_FILE`), gathers messages while its connections are busy, writes each gathered batch as one
 * transaction of multi-row INSERTs (one per table, as the raw insert writes them), and acks the
 * batch's messages once it is committed. No configuration, routing, planning of rows, schema changes,
 * settlement records, counts, leases or logs.
 *
 * Run as a child process (`postgres-floor.phase.ts`), given in the environment: NATS_URL, DATABASE_URL,
 * NAME (of its consumers, deleted once read), SOURCE_ID, FROM (where its consumers start, as an ISO
 * time), ROWS_FILE, SCHEMA (tables named as in `ROWS_FILE`, emptied after the warm-up), BATCH
 * (messages per transaction at most) and CONNECTIONS (transactions at once). It reads the source
 * twice: to warm up, then timed. Prints `warmed up` after the first and `done <seconds>` after the
 * second.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'pg';
import type { Delivery } from '@tributary/event-log';
import { readAll, requiredEnvironment, withFloorLog } from './floor-reads';
import type { FloorRows } from './postgres-floor.phase';

interface Gathered {
  deliveries: Delivery[];
  committed: Promise<void>;
  commit(): void;
  fail(error: unknown): void;
}

class FloorWriter {
  private gathering: Gathered | undefined;
  private writing = 0;
  private scheduled = false;
  private readonly statements: Array<{ table: string; columns: string }>;

  constructor(
    private readonly pool: Pool,
    schema: string,
    private readonly rows: FloorRows,
    private readonly batch: number,
    private readonly connections: number,
  ) {
    this.statements = rows.tables.map(({ name, columns }) => ({
      table: `"${schema}"."${name}"`,
      columns: columns.map((column) => `"${column}"`).join(', '),
    }));
  }

  /** Resolves once the message's rows are committed. */
  write(delivery: Delivery): Promise<void> {
    const gathered = (this.gathering ??= gather());
    gathered.deliveries.push(delivery);
    if (gathered.deliveries.length >= this.batch) this.send();
    else if (!this.scheduled) {
      this.scheduled = true;
      // A batch not full goes after this turn's deliveries only if a connection is free for it.
      setImmediate(() => {
        this.scheduled = false;
        if (this.writing < this.connections) this.send();
      });
    }
    return gathered.committed;
  }

  private send(): void {
    const gathered = this.gathering;
    this.gathering = undefined;
    if (!gathered || gathered.deliveries.length === 0) return;
    this.writing += 1;
    this.insert(gathered.deliveries)
      .then(gathered.commit, gathered.fail)
      .finally(() => {
        this.writing -= 1;
        if (this.gathering && this.writing < this.connections) this.send();
      });
  }

  private async insert(deliveries: Delivery[]): Promise<void> {
    const byTable = this.rows.tables.map(() => [] as Array<Array<string | null>>);
    for (const delivery of deliveries) {
      // Rows are made of the message's fields: any router reads the message, if only to plan them.
      if (typeof delivery.payload !== 'object')
        throw new Error(`message ${delivery.messageId} is not an object`);
      const rows = this.rows.byMessage[delivery.messageId];
      if (!rows) throw new Error(`message ${delivery.messageId} has no rows in the drained tables`);
      for (const [table, values] of rows) byTable[table]!.push(values);
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (let table = 0; table < byTable.length; table += 1) {
        const rows = byTable[table]!;
        if (rows.length === 0) continue;
        const { table: name, columns } = this.statements[table]!;
        const width = this.rows.tables[table]!.columns.length;
        const values = rows
          .map(
            (_, row) =>
              `(${Array.from({ length: width }, (__, column) => `$${row * width + column + 1}`).join(', ')})`,
          )
          .join(', ');
        await client.query(
          `INSERT INTO ${name} (${columns}) VALUES ${values} ON CONFLICT DO NOTHING`,
          rows.flat(),
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

function gather(): Gathered {
  let commit!: () => void;
  let fail!: (error: unknown) => void;
  const committed = new Promise<void>((resolve, reject) => {
    commit = resolve;
    fail = reject;
  });
  return { deliveries: [], committed, commit, fail };
}

async function main(): Promise<void> {
  const { NATS_URL, DATABASE_URL, NAME, SOURCE_ID, FROM, ROWS_FILE, SCHEMA, BATCH, CONNECTIONS } =
    requiredEnvironment([
      'NATS_URL',
      'DATABASE_URL',
      'NAME',
      'SOURCE_ID',
      'FROM',
      'ROWS_FILE',
      'SCHEMA',
      'BATCH',
      'CONNECTIONS',
    ]);
  const rows = JSON.parse(readFileSync(ROWS_FILE, 'utf8')) as FloorRows;
  const batch = Number(BATCH);
  const connections = Number(CONNECTIONS);
  const options = {
    sourceId: SOURCE_ID,
    from: new Date(FROM),
    messages: Object.keys(rows.byMessage).length,
    // Every connection busy with a full batch, and one gathering.
    inFlight: (connections + 1) * batch,
  };
  const pool = new Pool({ connectionString: DATABASE_URL, max: connections });
  const writer = new FloorWriter(pool, SCHEMA, rows, batch, connections);
  const write = (delivery: Delivery) => writer.write(delivery);
  try {
    await withFloorLog(NATS_URL, async (log) => {
      await readAll(log, `${NAME}-warmup`, options, write);
      await pool.query(`TRUNCATE ${rows.tables.map(({ name }) => `"${SCHEMA}"."${name}"`).join(', ')}`);
      console.log('warmed up');
      const seconds = await readAll(log, NAME, options, write);
      console.log(`done ${seconds}`);
    });
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
