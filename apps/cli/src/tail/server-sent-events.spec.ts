import { ServerSentEventParser } from './server-sent-events';

describe('ServerSentEventParser', () => {
  it('reads events with ids, skips comments, and keeps the reconnection delay', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push('retry: 2000\n: live events\n\nid: 7\ndata: {"a":1}\n\n: keep-alive\n\n')).toEqual([
      { id: '7', data: '{"a":1}' },
    ]);
    expect(parser.retryMs).toBe(2000);
    expect(parser.lastEventId).toBe('7');
  });

  it('puts together events cut anywhere, whatever the line ends', () => {
    const text =
      'id: 1\r\ndata: first\r\n\r\nid: 2\rdata: second\r\rid: 3\nevent: note\ndata: line one\ndata: line two\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const parser = new ServerSentEventParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(events).toEqual([
        { id: '1', data: 'first' },
        { id: '2', data: 'second' },
        { id: '3', event: 'note', data: 'line one\nline two' },
      ]);
      expect(parser.lastEventId).toBe('3');
    }
  });

  it('does not dispatch an event before its blank line, nor one without data, but moves the position', () => {
    const parser = new ServerSentEventParser('4');
    expect(parser.push('id: 5\ndata: half')).toEqual([]);
    expect(parser.lastEventId).toBe('4');
    expect(parser.push('\n\nid: 6\n\n')).toEqual([{ id: '5', data: 'half' }]);
    expect(parser.lastEventId).toBe('6');
  });

  it('ignores unknown fields, a retry that is not a number, and an id holding NUL', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push('retry: soon\nid: a\u0000b\nfoo: bar\ndata\n\n')).toEqual([{ data: '' }]);
    expect(parser.retryMs).toBeUndefined();
    expect(parser.lastEventId).toBeUndefined();
  });
});
