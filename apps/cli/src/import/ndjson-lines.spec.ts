import { Readable } from 'node:stream';
import { parseRetryAfter } from './batch-sender';
import { readLines } from './ndjson-lines';
import { parseLine } from './ndjson-importer';
import { PlainProgressListener } from './import-progress';

async function collect(chunks: string[]) {
  const lines = [];
  for await (const line of readLines(Readable.from(chunks.map((chunk) => Buffer.from(chunk)))))
    lines.push(line);
  return lines;
}

describe('readLines', () => {
  it('numbers every line across chunk boundaries, strips \\r, keeps a last line without newline', async () => {
    const lines = await collect(['{"a":1}\r\n{"b"', ':2}\n\n', 'é', 'tail']);
    expect(lines.map(({ lineNumber, text }) => [lineNumber, text])).toEqual([
      [1, '{"a":1}'],
      [2, '{"b":2}'],
      [3, ''],
      [4, 'étail'],
    ]);
    // Bytes consumed, for the progress over the file size: 'é' is two bytes.
    expect(lines.map((line) => line.bytesRead)).toEqual([9, 17, 18, 24]);
  });

  it('splits a multi-byte character across chunks without corrupting it', async () => {
    const bytes = Buffer.from('"ü"\n');
    const lines = [];
    for await (const line of readLines(Readable.from([bytes.subarray(0, 2), bytes.subarray(2)])))
      lines.push(line.text);
    expect(lines).toEqual(['"ü"']);
  });

  it('yields nothing for an empty stream', async () => {
    expect(await collect([])).toEqual([]);
  });
});

describe('parseLine', () => {
  it('drops sentAt, keeps a given messageId, and derives a stable one from the write key, line and text', () => {
    const kept = parseLine('{"type":"track","messageId":"m1","sentAt":"2019-01-01T00:00:00Z"}', 1, 'wk');
    expect(kept).toMatchObject({ line: 1, message: { type: 'track', messageId: 'm1' } });
    expect((kept as any).message).not.toHaveProperty('sentAt');
    const id = (text: string, line: number, key: string) =>
      (parseLine(text, line, key) as any).message.messageId;
    expect(id('{"messageId":null}', 5, 'wk')).toBe(id('{"messageId":null}', 5, 'wk'));
    expect(id('{"messageId":""}', 5, 'wk')).toMatch(/^import-[0-9a-f]{40}$/);
    expect(id('{}', 5, 'wk')).not.toBe(id('{}', 6, 'wk'));
    expect(id('{}', 5, 'wk')).not.toBe(id('{}', 5, 'other'));
  });

  it('reports blank, non-JSON, non-object and oversized lines', () => {
    expect(parseLine('  ', 1, 'k')).toBe('blank');
    expect(parseLine('{', 2, 'k')).toEqual({ line: 2, reason: expect.stringMatching(/^not valid JSON: /) });
    expect(parseLine('null', 3, 'k')).toEqual({ line: 3, reason: 'not a JSON object (null)' });
    expect(parseLine('"s"', 4, 'k')).toEqual({ line: 4, reason: 'not a JSON object (string)' });
    expect(parseLine(JSON.stringify({ messageId: 'm', p: 'x'.repeat(32_768) }), 5, 'k')).toEqual({
      line: 5,
      reason: expect.stringMatching(/^message of \d+ bytes is larger than the server's 32 KiB limit$/),
    });
    const atLimit = JSON.stringify({ messageId: 'm', p: '' });
    const padded = JSON.stringify({ messageId: 'm', p: 'x'.repeat(32_768 - atLimit.length) });
    expect(Buffer.byteLength(padded)).toBe(32_768);
    expect(parseLine(padded, 6, 'k')).toMatchObject({ line: 6, bytes: 32_768 });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds and HTTP dates, caps them at 5 minutes, and ignores the unreadable', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('86400', now)).toBe(300_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});

describe('PlainProgressListener', () => {
  it('prints a progress line at most once per interval, and the first bad lines only', () => {
    let output = '';
    let clock = 0;
    const listener = new PlainProgressListener(
      { write: (text: string) => (output += text) },
      1000,
      () => clock,
    );
    const state = {
      fileSize: 200,
      bytesRead: 50,
      linesRead: 10,
      accepted: 9,
      badLines: 1,
      retriedBatches: 0,
    };
    listener.start();
    listener.update(state);
    expect(output).toBe('');
    clock = 1000;
    listener.update(state);
    clock = 1500;
    listener.update(state);
    expect(output).toBe('progress: 25% of the file, 10 lines read, 9 accepted, 1 bad, 0 batches retried\n');
    output = '';
    for (let line = 1; line <= 25; line++) listener.badLine({ line, reason: 'bad' });
    expect(output.split('\n').filter((line) => line.startsWith('line ')).length).toBe(20);
    expect(output).toContain('(further bad lines are only counted)');
  });
});
