import type { CliContext } from './cli-context';
import type { Connection } from './connection-options';
import { safeForTerminal, safeJsonForTerminal } from './terminal-text';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** A plain-text table: one header line, padded columns, no borders (easy to read and to grep). */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => formatCell(column.value(row))));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((line) => line[index].length)),
  );
  const line = (values: string[]) =>
    values
      .map((value, index) => (index === values.length - 1 ? value : value.padEnd(widths[index])))
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines for one resource. */
export function renderRecord(entries: ReadonlyArray<[string, unknown]>): string {
  const width = Math.max(...entries.map(([key]) => key.length));
  return (
    entries.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${formatCell(value)}`).join('\n') + '\n'
  );
}

/** One cell of server data on one line: control characters, newlines included, shown escaped. */
function formatCell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(formatCell).join(',');
  if (typeof value === 'object') return safeJsonForTerminal(safeForTerminal(JSON.stringify(value)));
  return safeForTerminal(String(value));
}

/**
 * `--json` prints the API's own resource(s); otherwise the readable form. Either way what reaches
 * the terminal carries no control sequence from the server's data (`safeForTerminal`).
 */
export function print(
  context: CliContext,
  connection: Pick<Connection, 'json'>,
  json: unknown,
  readable: () => string,
): void {
  context.stdout.write(
    connection.json
      ? safeJsonForTerminal(JSON.stringify(json, null, 2)) + '\n'
      : safeForTerminal(readable(), { keepNewlines: true }),
  );
}

export function slugOf(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
