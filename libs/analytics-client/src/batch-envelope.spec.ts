import { buildEnvelope, envelopeOverheadBytes, MAX_BATCH_BYTES, nextBatchLength } from './batch-envelope';
import type { SerializedMessage } from './message-builder';

function entry(json: string): SerializedMessage {
  return { message: JSON.parse(json), json, bytes: Buffer.byteLength(json) };
}

function messageOfBytes(bytes: number, filler = 'x'): SerializedMessage {
  const shell = JSON.stringify({ type: 'track', p: '' });
  const fillerBytes = Buffer.byteLength(filler);
  return entry(JSON.stringify({ type: 'track', p: filler.repeat((bytes - shell.length) / fillerBytes) }));
}

describe('the batch envelope', () => {
  it('is {batch, sentAt, writeKey} in that order, with the messages as serialized', () => {
    const messages = [entry('{"type":"track","a":1}'), entry('{"type":"identify","b":"é"}')];
    const body = buildEnvelope(messages, new Date('2026-01-01T00:00:00.000Z'), 'wk"1');
    expect(Object.keys(JSON.parse(body))).toEqual(['batch', 'sentAt', 'writeKey']);
    expect(JSON.parse(body)).toEqual({
      batch: [
        { type: 'track', a: 1 },
        { type: 'identify', b: 'é' },
      ],
      sentAt: '2026-01-01T00:00:00.000Z',
      writeKey: 'wk"1',
    });
  });

  it('knows its size before it is built: overhead + messages + commas', () => {
    const messages = [entry('{"a":"ü"}'), entry('{"b":2}'), entry('{"c":3}')];
    const body = buildEnvelope(messages, new Date(), 'key-ä');
    const predicted =
      envelopeOverheadBytes('key-ä') + messages.reduce((sum, m) => sum + m.bytes, 0) + messages.length - 1;
    expect(Buffer.byteLength(body)).toBe(predicted);
  });
});

describe('nextBatchLength', () => {
  const overheadBytes = envelopeOverheadBytes('wk');

  it('takes at most batchSize messages', () => {
    const queue = Array.from({ length: 250 }, () => entry('{"a":1}'));
    expect(nextBatchLength(queue, { batchSize: 100, maxBatchBytes: MAX_BATCH_BYTES, overheadBytes })).toBe(
      100,
    );
    expect(
      nextBatchLength(queue.slice(0, 30), { batchSize: 100, maxBatchBytes: MAX_BATCH_BYTES, overheadBytes }),
    ).toBe(30);
    expect(nextBatchLength([], { batchSize: 100, maxBatchBytes: MAX_BATCH_BYTES, overheadBytes })).toBe(0);
  });

  it('stops before the body would pass the byte limit, and the body really stays under it', () => {
    const queue = Array.from({ length: 200 }, () => messageOfBytes(4000, 'ü'));
    const limits = { batchSize: 2500, maxBatchBytes: MAX_BATCH_BYTES, overheadBytes };
    const length = nextBatchLength(queue, limits);
    expect(length).toBe(Math.floor((MAX_BATCH_BYTES - overheadBytes + 1) / 4001));
    const body = buildEnvelope(queue.slice(0, length), new Date(), 'wk');
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    const oneMore = buildEnvelope(queue.slice(0, length + 1), new Date(), 'wk');
    expect(Buffer.byteLength(oneMore)).toBeGreaterThan(MAX_BATCH_BYTES);
  });

  it('always takes the first message, whatever its size', () => {
    expect(
      nextBatchLength([messageOfBytes(3000)], { batchSize: 10, maxBatchBytes: 100, overheadBytes }),
    ).toBe(1);
  });
});
