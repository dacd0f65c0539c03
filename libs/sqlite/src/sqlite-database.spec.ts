import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from './sqlite-database';

describe('Database (node:sqlite)', () => {
  let directory: string;
  let database: Database;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-sqlite-'));
    database = new Database(join(directory, 'test.db'));
    database.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)');
  });

  afterEach(() => {
    database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('binds positional and named parameters and reports changes and row ids', () => {
    const insert = database.prepare<[string, Buffer]>('INSERT INTO items (name, data) VALUES (?, ?)');
    expect(insert.run('a', Buffer.from('x'))).toEqual({ changes: 1, lastInsertRowid: 1 });
    const byName = database.prepare<{ name: string }, { id: number }>(
      'SELECT id FROM items WHERE name = @name',
    );
    expect(byName.get({ name: 'a' })?.id).toBe(1);
    expect(byName.get({ name: 'missing' })).toBeUndefined();
  });

  it('reads BLOBs as Buffers, in rows and plucked', () => {
    database.prepare('INSERT INTO items (name, data) VALUES (?, ?)').run('a', Buffer.from('bytes'));
    const row = database.prepare('SELECT data FROM items').get() as { data: Buffer };
    expect(Buffer.isBuffer(row.data)).toBe(true);
    expect(row.data.toString()).toBe('bytes');
    const plucked = database.prepare('SELECT data FROM items').pluck();
    expect((plucked.get() as Buffer).equals(Buffer.from('bytes'))).toBe(true);
    expect([...plucked.iterate()].map((value) => (value as Buffer).toString())).toEqual(['bytes']);
  });

  it('reads integers as bigint when asked', () => {
    database.prepare('INSERT INTO items (id, name) VALUES (?, ?)').run(2n ** 60n, 'big');
    expect(database.prepare('SELECT id FROM items').pluck().safeIntegers().get()).toBe(2n ** 60n);
  });

  it('commits a transaction, rolls it back on a throw, and nests as a savepoint', () => {
    const insert = database.prepare('INSERT INTO items (name) VALUES (?)');
    const count = () => database.prepare('SELECT count(*) FROM items').pluck().get();
    database
      .transaction((names: string[]) => names.forEach((name) => insert.run(name)))
      .immediate(['a', 'b']);
    expect(count()).toBe(2);
    const failing = database.transaction(() => {
      insert.run('c');
      throw new Error('stop');
    });
    expect(() => failing()).toThrow('stop');
    expect(count()).toBe(2);
    const outer = database.transaction(() => {
      insert.run('d');
      expect(() => database.transaction(() => insert.run('a'))()).toThrow();
      insert.run('e');
    });
    outer();
    expect(count()).toBe(4);
    expect(database.inTransaction).toBe(false);
  });

  it("names SQLite's result code in the error's code", () => {
    const insert = database.prepare('INSERT INTO items (name) VALUES (?)');
    insert.run('a');
    expect(() => insert.run('a')).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT' }));
    const second = new Database(join(directory, 'test.db'), { timeout: 0 });
    database.exec('BEGIN EXCLUSIVE');
    try {
      expect(() => second.exec('BEGIN EXCLUSIVE')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    } finally {
      database.exec('ROLLBACK');
      second.close();
    }
  });

  it('answers pragmas, simple or as rows', () => {
    expect(database.pragma('journal_mode = WAL', { simple: true })).toBe('wal');
    expect(typeof database.pragma('page_size', { simple: true })).toBe('number');
  });
});
