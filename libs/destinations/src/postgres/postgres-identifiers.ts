/** SQL identifiers and error codes of the PostgreSQL destination, shared by the adapter and the table DDL. */

/** This message can never be stored as it is: the router discards it with the reason. */
export class PermanentRowError extends Error {}

/** `"name"` with embedded quotes doubled: safe for any string without a NUL byte (the planner strips those). */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new PermanentRowError('identifier contains a NUL byte');
  return `"${name.replace(/"/g, '""')}"`;
}

/** The SQLSTATE of a server-side error; `undefined` for any other error (a lost connection). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
