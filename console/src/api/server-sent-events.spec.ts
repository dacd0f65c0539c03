import { parseServerSentEvents } from './server-sent-events';

describe('parseServerSentEvents', () => {
  it('returns complete events and keeps the incomplete rest for the next chunk', () => {
    const first = parseServerSentEvents(
      'retry: 2000\n: live events\n\nid: 7\ndata: {"a":1}\n\nid: 8\ndata: {"a"',
    );
    expect(first.events).toEqual([{ id: '7', data: '{"a":1}' }]);
    const second = parseServerSentEvents(`${first.rest}:2}\n\n: keep-alive\n\n`);
    expect(second.events).toEqual([{ id: '8', data: '{"a":2}' }]);
    expect(second.rest).toBe('');
  });

  it('skips comments and events without data, joins data lines, and reads CRLF and CR line ends', () => {
    const { events, rest } = parseServerSentEvents(
      ': comment only\n\nid: 1\n\nevent: note\r\ndata: one\r\ndata:two\r\n\r\nid: 3\rdata: three\r\r',
    );
    expect(events).toEqual([
      { event: 'note', data: 'one\ntwo' },
      { id: '3', data: 'three' },
    ]);
    expect(rest).toBe('');
  });
});
