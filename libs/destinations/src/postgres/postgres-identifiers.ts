/** SQL identifiers of the PostgreSQL destination, shared by the adapter and the table registry. */

/** This message can never be stored as it is: the router discards it with the reason. */
export class PermanentRowError extends Error {}

/** `"name"` with embedded quotes doubled: safe for any string without a NUL byte (the planner strips those). */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new PermanentRowError('identifier contains a NUL byte');
  return `"${name.replace(/"/g, '""')}"`;
}
