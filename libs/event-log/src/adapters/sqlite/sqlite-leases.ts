import type { Database, Statement } from '@tributary/sqlite';
import { assertLeaseName, assertLeaseWrite } from '../../event-log.validation';
import type { LeaseRecord, LeaseValue } from '../../ports/leases.port';
import type { LeaseRow } from './sqlite-event-log.schema';
import type { EnqueueWrite } from './sqlite-write.batcher';

/** Leases in the embedded log's file (table `leases`): the revision column is the compare-and-set token. */
export class SqliteLeases {
  private readonly statements: { select: Statement; insert: Statement; update: Statement };

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    private readonly assertOpen: () => void,
  ) {
    this.statements = {
      select: database.prepare('SELECT * FROM leases WHERE name = ?'),
      insert: database.prepare(
        'INSERT INTO leases (name, holder, data, revision) VALUES (?, ?, ?, 1) ON CONFLICT (name) DO NOTHING',
      ),
      update: database.prepare(
        'UPDATE leases SET holder = ?, data = ?, revision = revision + 1 WHERE name = ? AND revision = ?',
      ),
    };
  }

  read(name: string): LeaseRecord | null {
    assertLeaseName(name);
    this.assertOpen();
    const row = this.statements.select.get(name) as LeaseRow | undefined;
    return row
      ? { holder: row.holder, data: JSON.parse(row.data) as Record<string, unknown>, revision: row.revision }
      : null;
  }

  async write(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    assertLeaseName(name);
    assertLeaseWrite(value, expectedRevision);
    const data = JSON.stringify(value.data);
    return this.enqueueWrite(() => {
      const written =
        expectedRevision === 0
          ? this.statements.insert.run(name, value.holder, data)
          : this.statements.update.run(value.holder, data, name, expectedRevision);
      return written.changes === 1 ? expectedRevision + 1 : null;
    });
  }
}
