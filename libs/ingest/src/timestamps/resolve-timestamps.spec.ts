import { resolveTimestamps } from './resolve-timestamps';

const receivedAt = new Date('2026-11-25T21:15:06.000Z');

describe('resolveTimestamps: the rows of docs/tracking-api.md §7.2', () => {
  it('given originalTimestamp and sentAt, then timestamp = receivedAt − (sentAt − originalTimestamp)', () => {
    // The client clock runs 1 h 0.5 s ahead; the event happened 2 s before sending.
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T22:15:04.500Z',
      messageSentAt: undefined,
      batchSentAt: '2026-11-25T22:15:06.500Z',
      receivedAt,
    });
    expect(result).toEqual({
      timestamp: '2026-11-25T21:15:04.000Z',
      originalTimestamp: '2026-11-25T22:15:04.500Z',
      sentAt: '2026-11-25T22:15:06.500Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
  });

  it('given originalTimestamp only, then timestamp = originalTimestamp', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T16:15:05.320-05:00',
      messageSentAt: undefined,
      batchSentAt: undefined,
      receivedAt,
    });
    expect(result).toEqual({
      timestamp: '2026-11-25T21:15:05.320Z',
      originalTimestamp: '2026-11-25T21:15:05.320Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
  });

  it('given sentAt only, then timestamp = receivedAt and sentAt is still reported', () => {
    const result = resolveTimestamps({
      messageTimestamp: undefined,
      messageSentAt: undefined,
      batchSentAt: '2026-11-25T21:15:05.999Z',
      receivedAt,
    });
    expect(result).toEqual({
      timestamp: '2026-11-25T21:15:06.000Z',
      sentAt: '2026-11-25T21:15:05.999Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
  });

  it('given neither, then timestamp = receivedAt and no other field appears', () => {
    const result = resolveTimestamps({
      messageTimestamp: undefined,
      messageSentAt: undefined,
      batchSentAt: undefined,
      receivedAt,
    });
    expect(result).toEqual({ timestamp: '2026-11-25T21:15:06.000Z', receivedAt: '2026-11-25T21:15:06.000Z' });
  });
});

describe('resolveTimestamps: which sentAt, and unparseable values', () => {
  it('given both a batch and a message sentAt, then the batch one wins', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T21:15:00.000Z',
      messageSentAt: '2026-11-25T21:15:01.000Z',
      batchSentAt: '2026-11-25T21:15:03.000Z',
      receivedAt,
    });
    expect(result.sentAt).toBe('2026-11-25T21:15:03.000Z');
    expect(result.timestamp).toBe('2026-11-25T21:15:03.000Z');
  });

  it('given no batch sentAt, then the message’s own sentAt is used', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T21:15:00.000Z',
      messageSentAt: '2026-11-25T21:15:01.000Z',
      batchSentAt: undefined,
      receivedAt,
    });
    expect(result.sentAt).toBe('2026-11-25T21:15:01.000Z');
    expect(result.timestamp).toBe('2026-11-25T21:15:05.000Z');
  });

  it('given an unparseable batch sentAt, then it counts as absent and the message’s own is used', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T21:15:00.000Z',
      messageSentAt: '2026-11-25T21:15:01.000Z',
      batchSentAt: 'not a time',
      receivedAt,
    });
    expect(result.sentAt).toBe('2026-11-25T21:15:01.000Z');
  });

  it('given an unparseable timestamp and a sentAt, then timestamp = receivedAt and no originalTimestamp', () => {
    const result = resolveTimestamps({
      messageTimestamp: 'soon',
      messageSentAt: undefined,
      batchSentAt: '2026-11-25T21:15:01.000Z',
      receivedAt,
    });
    expect(result).toEqual({
      timestamp: '2026-11-25T21:15:06.000Z',
      sentAt: '2026-11-25T21:15:01.000Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
  });

  it('given a very old timestamp (offline device), then it is kept: there is no lower bound', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2001-01-01T00:00:00Z',
      messageSentAt: undefined,
      batchSentAt: undefined,
      receivedAt,
    });
    expect(result.timestamp).toBe('2001-01-01T00:00:00.000Z');
  });

  it('given a sentAt so wrong that the correction leaves years 0000–9999, then originalTimestamp is used', () => {
    const result = resolveTimestamps({
      messageTimestamp: '9999-01-01T00:00:00Z',
      messageSentAt: undefined,
      batchSentAt: '0001-01-01T00:00:00Z',
      receivedAt,
    });
    expect(result.timestamp).toBe('9999-01-01T00:00:00.000Z');
  });

  it('given a sentAt earlier than the event (client clock odd), then the correction still applies', () => {
    const result = resolveTimestamps({
      messageTimestamp: '2026-11-25T21:15:10.000Z',
      messageSentAt: undefined,
      batchSentAt: '2026-11-25T21:15:08.000Z',
      receivedAt,
    });
    expect(result.timestamp).toBe('2026-11-25T21:15:08.000Z');
  });

  it('given an invalid receivedAt, then it throws: that is a caller bug, not bad input', () => {
    expect(() =>
      resolveTimestamps({
        messageTimestamp: undefined,
        messageSentAt: undefined,
        batchSentAt: undefined,
        receivedAt: new Date('nope'),
      }),
    ).toThrow(RangeError);
  });
});
