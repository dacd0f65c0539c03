/**
 * The bench's tables: rows of cells between two blank lines, the first column aligned left (the row's
 * name) and the others right (figures), two spaces apart.
 */
export function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  console.log('');
  for (const row of rows) {
    console.log(
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  '),
    );
  }
  console.log('');
}
