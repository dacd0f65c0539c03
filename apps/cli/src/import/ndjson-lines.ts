import type { Readable } from 'node:stream';

export interface NdjsonLine {
  /** 1-based, counting every line of the file, blank ones included. */
  lineNumber: number;
  text: string;
  /** Bytes of the file consumed up to and including this line's newline. */
  bytesRead: number;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The lines of a stream, one at a time. Pulling chunks with `for await` keeps the back-pressure: the
 * file is read only as fast as batches are sent, so a file of any size takes little memory. A final
 * line without a newline still counts; `\r\n` endings are accepted.
 */
export async function* readLines(stream: Readable): AsyncGenerator<NdjsonLine> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let lineNumber = 0;
  let bytesRead = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, newline);
      const line =
        pendingLength === 0 ? piece : Buffer.concat([...pending, piece], pendingLength + piece.length);
      pending = [];
      pendingLength = 0;
      bytesRead += newline - start + 1;
      start = newline + 1;
      lineNumber += 1;
      yield { lineNumber, text: decode(line), bytesRead };
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pending.push(rest);
      pendingLength += rest.length;
      bytesRead += rest.length;
    }
  }
  if (pendingLength > 0) {
    lineNumber += 1;
    yield { lineNumber, text: decode(Buffer.concat(pending, pendingLength)), bytesRead };
  }
}

function decode(line: Buffer): string {
  const end = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
  return line.toString('utf8', 0, end);
}
