/**
 * PostgreSQL as a warehouse: every message inserted as rows into Segment-style tables in the source's
 * own schema (`postgres.adapter.ts`).
 */
import { defineSetting } from '../catalog/destination-setting.builder';
import type { DestinationDefinition } from '../destination-definition';
import { problemWithConnectionString } from './postgres-connection';
import { SCHEMA_NAME_PATTERN, refusedSchemaReason } from './postgres-schema';
import { DEFAULT_CONNECTIONS_PER_POOL, PostgresDeliveryAdapter } from './postgres.adapter';

/**
 * Rows of many messages go in one transaction and multi-row statements (`warehouse-batch.writer.ts`),
 * one call per pool connection at once: while one waits for the database, the others keep it busy.
 */
const gathering = { maxMessages: 250, callsAtOnce: DEFAULT_CONNECTIONS_PER_POOL } as const;

export const postgresDefinition: DestinationDefinition = {
  catalog: {
    slug: 'postgres',
    displayName: 'PostgreSQL',
    description:
      'Insert every message as a row into PostgreSQL tables (one table per message type, plus one per ' +
      "track event) in the source's own schema, for SQL analysis of the raw data. Tributary writes only " +
      'to tables it created there.',
    website: 'https://www.postgresql.org/',
    status: 'PUBLIC',
    logos: { logo: '', mark: '' },
    components: ['CLOUD'],
    categories: { primary: 'Warehouses', secondary: '', additional: [] },
    settings: [
      defineSetting('connection_string', 'Connection String', 'password', {
        required: true,
        description:
          'A libpq connection URI, e.g. postgres://user:pass@host:5432/db. Stored encrypted. Socket paths ' +
          'and sslcert, sslkey and sslrootcert are not accepted.',
      }),
      // Empty by default: the adapter then writes to the source's own schema, named after its slug, as
      // Segment's warehouses do, rather than to `public`, which other applications of the database use.
      defineSetting('schema', 'Schema', 'string', {
        pattern: SCHEMA_NAME_PATTERN,
        refusedValueReason: refusedSchemaReason,
        description:
          "The schema that holds the tables; empty means the source's own schema, named after its slug " +
          '(web-app → web_app). System schemas (pg_*, information_schema) are refused.',
      }),
    ],
    // A warehouse: rows are inserted whatever their age, and Segment does not run destination filters
    // for warehouses (docs/config-api.md D7).
    capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: false },
  },
  checkSetting(key, value) {
    if (key !== 'connection_string' || typeof value !== 'string') return null;
    const problem = problemWithConnectionString(value);
    return problem === null ? null : `setting "connection_string" ${problem}`;
  },
  gathering,
  // The pool has a connection for each call the router may have under way.
  createAdapter: ({ egressGuard, options }) =>
    new PostgresDeliveryAdapter({
      ...options.postgres,
      maxConnectionsPerPool: gathering.callsAtOnce,
      egressGuard,
    }),
};
