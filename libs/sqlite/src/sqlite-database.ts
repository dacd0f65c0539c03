import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';

/**
 * Embedded SQLite through Node's built-in `node:sqlite` (so that an install compiles no native
 * module), with the few conveniences the adapters are written against: `transaction` (nested calls
 * become savepoints), `pragma`, `pluck`, `safeIntegers`, BLOBs read as `Buffer`, and errors carrying
 * SQLite's own code name (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...) in `code`.
 */
export interface DatabaseOptions {
  /** Milliseconds to wait for a lock held by another connection before failing with SQLITE_BUSY. */
  timeout?: number;
  readonly?: boolean;
}

export interface RunResult {
  /** Rows changed (a number: only statements set to `safeIntegers` read integers as bigint). */
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A statement's bind parameters: a tuple of positional values, or one object of named ones. */
type BindArguments<Bind> = Bind extends unknown[] ? Bind : [Bind];

/** A transaction function: `fn(...)` runs in BEGIN (deferred), `fn.immediate(...)` in BEGIN IMMEDIATE. */
export type Transaction<F extends (...args: any[]) => any> = F & {
  immediate: (...args: Parameters<F>) => ReturnType<F>;
};

export class Database {
  private readonly native: DatabaseSync;
  private depth = 0;

  constructor(file: string, options: DatabaseOptions = {}) {
    try {
      this.native = new DatabaseSync(file, {
        timeout: options.timeout ?? 5000,
        readOnly: options.readonly ?? false,
      });
    } catch (error) {
      throw withSqliteCode(error);
    }
  }

  /** Prepares a statement; `Row` is what `get`/`all`/`iterate` give (after `pluck`, the first column). */
  prepare<Bind = any[], Row = any>(sql: string): Statement<Bind, Row> {
    try {
      return new Statement<Bind, Row>(this.native.prepare(sql));
    } catch (error) {
      throw withSqliteCode(error);
    }
  }

  exec(sql: string): this {
    try {
      this.native.exec(sql);
    } catch (error) {
      throw withSqliteCode(error);
    }
    return this;
  }

  /** `pragma('journal_mode = WAL')`; with `{ simple: true }` the first column of the first row. */
  pragma(text: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare(`PRAGMA ${text}`);
    if (options.simple) return statement.pluck().get();
    return statement.all();
  }

  /**
   * Wraps `fn` so that each call runs in one transaction, committed when `fn` returns and rolled back
   * when it throws. A call inside another transaction runs in a savepoint of it.
   */
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F> {
    const run = (begin: string, args: unknown[]): ReturnType<F> => {
      if (this.depth > 0) {
        const savepoint = `tributary_${this.depth}`;
        this.exec(`SAVEPOINT ${savepoint}`);
        this.depth += 1;
        try {
          const result = fn(...args);
          this.exec(`RELEASE ${savepoint}`);
          return result;
        } catch (error) {
          this.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
          throw error;
        } finally {
          this.depth -= 1;
        }
      }
      this.exec(begin);
      this.depth = 1;
      try {
        const result = fn(...args);
        this.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.native.isTransaction) this.exec('ROLLBACK');
        throw error;
      } finally {
        this.depth = 0;
      }
    };
    const deferred = ((...args: unknown[]) => run('BEGIN', args)) as Transaction<F>;
    deferred.immediate = (...args: unknown[]) => run('BEGIN IMMEDIATE', args);
    return deferred;
  }

  get inTransaction(): boolean {
    return this.native.isTransaction;
  }

  get open(): boolean {
    return this.native.isOpen;
  }

  close(): void {
    if (this.native.isOpen) this.native.close();
  }
}

export class Statement<Bind = any[], Row = any> {
  private plucked = false;

  constructor(private readonly native: StatementSync) {}

  /** `get`, `all` and `iterate` give the first column's value instead of a row object. */
  pluck(toggle = true): this {
    this.plucked = toggle;
    this.native.setReturnArrays(toggle);
    return this;
  }

  /** INTEGER columns read as `bigint` (for values past 2^53). */
  safeIntegers(toggle = true): this {
    this.native.setReadBigInts(toggle);
    return this;
  }

  run(...parameters: BindArguments<Bind>): RunResult {
    try {
      return this.native.run(...(parameters as SQLInputValue[])) as RunResult;
    } catch (error) {
      throw withSqliteCode(error);
    }
  }

  get(...parameters: BindArguments<Bind>): Row | undefined {
    let row: unknown;
    try {
      row = this.native.get(...(parameters as SQLInputValue[]));
    } catch (error) {
      throw withSqliteCode(error);
    }
    return row === undefined ? undefined : this.read(row);
  }

  all(...parameters: BindArguments<Bind>): Row[] {
    let rows: unknown[];
    try {
      rows = this.native.all(...(parameters as SQLInputValue[]));
    } catch (error) {
      throw withSqliteCode(error);
    }
    for (let index = 0; index < rows.length; index += 1) rows[index] = this.read(rows[index]);
    return rows as Row[];
  }

  *iterate(...parameters: BindArguments<Bind>): IterableIterator<Row> {
    let rows: Iterator<unknown>;
    try {
      rows = this.native.iterate(...(parameters as SQLInputValue[]));
    } catch (error) {
      throw withSqliteCode(error);
    }
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        next = rows.next();
      } catch (error) {
        throw withSqliteCode(error);
      }
      if (next.done) return;
      yield this.read(next.value);
    }
  }

  /** node:sqlite reads BLOBs as plain `Uint8Array`s; the adapters compare and decode them as `Buffer`s. */
  private read(row: unknown): Row {
    if (this.plucked) return asBuffer((row as unknown[])[0]) as Row;
    const record = row as Record<string, unknown>;
    for (const key in record) {
      const value = record[key];
      if (typeof value === 'object' && value !== null) record[key] = asBuffer(value);
    }
    return record as Row;
  }
}

/** A view over the same bytes, no copy (`ArrayBuffer.isView`, not `instanceof`: see `withSqliteCode`). */
function asBuffer(value: unknown): unknown {
  if (!ArrayBuffer.isView(value) || Buffer.isBuffer(value)) return value;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/** SQLite's primary result codes by number (the low byte of an extended code). */
const PRIMARY_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  26: 'SQLITE_NOTADB',
};

/** node:sqlite's errors say `ERR_SQLITE_ERROR` with the number in `errcode`: name the SQLite code. */
function withSqliteCode(error: unknown): unknown {
  // Not `instanceof Error`: the error comes from Node's own realm, which a test sandbox does not share.
  const failure = error as { code?: string; errcode?: unknown } | null;
  if (typeof failure === 'object' && failure !== null && typeof failure.errcode === 'number') {
    failure.code = PRIMARY_CODES[failure.errcode & 0xff] ?? failure.code;
  }
  return error;
}
