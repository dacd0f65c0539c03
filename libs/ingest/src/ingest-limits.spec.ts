import {
  DEFAULT_INGEST_LIMITS,
  MIN_BATCH_BODY_BYTES,
  maxBodyBytesFor,
  resolveIngestLimits,
} from './ingest-limits';

describe('ingest limits (docs/tracking-api.md §8.3)', () => {
  it('defaults to 512 KiB per batch, 32 KiB per single body and per message, 2,500 messages', () => {
    expect(DEFAULT_INGEST_LIMITS).toEqual({
      maxBatchBodyBytes: 524_288,
      maxSingleEventBodyBytes: 32_768,
      maxMessageBytes: 32_768,
      maxMessagesPerBatch: 2500,
    });
  });

  it('gives batch and import the batch limit and every single-event route the 32 KiB one', () => {
    expect(maxBodyBytesFor('batch')).toBe(524_288);
    expect(maxBodyBytesFor('import')).toBe(524_288);
    for (const route of ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const) {
      expect(maxBodyBytesFor(route)).toBe(32_768);
    }
  });

  it('lets the batch limit be raised', () => {
    const limits = resolveIngestLimits({ maxBatchBodyBytes: 1024 * 1024 });
    expect(limits.maxBatchBodyBytes).toBe(1024 * 1024);
    expect(maxBodyBytesFor('batch', limits)).toBe(1024 * 1024);
  });

  it('refuses a batch limit below 512 KiB: real Ruby and Python batches would be lost', () => {
    expect(() => resolveIngestLimits({ maxBatchBodyBytes: MIN_BATCH_BODY_BYTES - 1 })).toThrow(
      /at least 524288/,
    );
    expect(() => resolveIngestLimits({ maxBatchBodyBytes: 500_000 })).toThrow(RangeError);
  });

  it.each([[0], [-1], [1.5], [Number.NaN]])('refuses %p as a limit', (value) => {
    expect(() => resolveIngestLimits({ maxMessagesPerBatch: value })).toThrow(RangeError);
  });
});
