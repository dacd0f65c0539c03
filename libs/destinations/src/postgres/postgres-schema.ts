/**
 * Pure: which PostgreSQL schema a destination writes to. As in Segment's warehouses, every source gets
 * its own schema by default, named after the source's slug, so that two sources (or two workspaces)
 * sharing a database do not share tables unless an operator asks for it with the `schema` setting.
 */

/** What the catalog accepts for the `schema` setting; the value reaches SQL, so it is checked again here. */
export const SCHEMA_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
const SCHEMA_NAME = new RegExp(SCHEMA_NAME_PATTERN);

/** PostgreSQL truncates longer identifiers (NAMEDATALEN - 1 bytes); we truncate first, predictably. */
const MAX_SCHEMA_NAME_BYTES = 63;

/**
 * Schemas PostgreSQL keeps for itself: `pg_catalog`, `pg_toast`, `pg_temp_*` and anything else starting
 * with `pg_` (reserved by the server), and `information_schema`. Matched without regard to case: the
 * server's own check is case-sensitive, but a look-alike name only confuses whoever reads the database.
 */
const SYSTEM_SCHEMA = /^(pg_|information_schema$)/i;

/** Why `name` may not be a destination's schema, or `null` when it may. */
export function refusedSchemaReason(name: string): string | null {
  if (!SCHEMA_NAME.test(name)) return `schema must match ${SCHEMA_NAME_PATTERN}`;
  if (SYSTEM_SCHEMA.test(name)) {
    return `schema "${name}" is a PostgreSQL system schema (pg_*, information_schema); choose another`;
  }
  return null;
}

/**
 * The default schema of a source: its slug in lower case, with every character other than a letter,
 * digit or `_` turned into `_` (`web-App` → `web_app`), cut to 63 bytes. A name that would start with a
 * digit, land in a system schema, or be `public` gets a `source_` prefix: the default is never `public`,
 * which every database has and other applications use.
 */
export function defaultSchemaOfSource(sourceSlug: string): string {
  let name = sourceSlug
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, MAX_SCHEMA_NAME_BYTES);
  if (name === '' || /^[0-9]/.test(name) || name === 'public' || SYSTEM_SCHEMA.test(name)) {
    name = `source_${name}`.slice(0, MAX_SCHEMA_NAME_BYTES);
  }
  return name;
}

export type ResolvedSchema =
  { readonly schema: string } | { readonly problem: string; readonly systemSchema: boolean };

/**
 * The schema a delivery writes to: the `schema` setting when it is set (any valid name but a system
 * schema, `public` included: an explicit choice), else the source's default schema.
 */
export function resolveWarehouseSchema(setting: unknown, sourceSlug: string | undefined): ResolvedSchema {
  if (setting === undefined || setting === null || setting === '') {
    if (sourceSlug === undefined || sourceSlug === '') {
      return {
        problem: 'setting "schema" is empty and the source is unknown, so there is no default schema',
        systemSchema: false,
      };
    }
    return { schema: defaultSchemaOfSource(sourceSlug) };
  }
  if (typeof setting !== 'string')
    return { problem: 'setting "schema" must be a string', systemSchema: false };
  const reason = refusedSchemaReason(setting);
  if (reason !== null)
    return { problem: `setting "schema": ${reason}`, systemSchema: SCHEMA_NAME.test(setting) };
  return { schema: setting };
}
