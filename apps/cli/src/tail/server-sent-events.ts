/** One event of a `text/event-stream`, as the WHATWG event-stream format defines it. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a `text/event-stream` as its text arrives, in pieces cut anywhere: lines end with LF, CRLF or
 * CR; `:` lines are comments (the server's keep-alives); a blank line ends an event; `retry:` is the
 * reconnection delay the server asks for. Events without data are not dispatched, but their `id`
 * still moves the position a reader resumes after, as the format says.
 */
export class ServerSentEventParser {
  /** The last `id:` seen: what `Last-Event-ID` carries on a reconnect. */
  lastEventId: string | undefined;
  /** The last `retry:` in milliseconds. */
  retryMs: number | undefined;
  private buffer = '';
  private pendingCarriageReturn = false;
  private data: string[] = [];
  private eventType: string | undefined;
  private eventId: string | undefined;

  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
  }

  /** The events that `chunk` completes. */
  push(chunk: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let text = chunk;
    // A CR that ended the last chunk and an LF that starts this one are one line end.
    if (this.pendingCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.pendingCarriageReturn = false;
    this.buffer += text;
    let start = 0;
    for (let index = 0; index < this.buffer.length; index++) {
      const character = this.buffer[index];
      if (character !== '\n' && character !== '\r') continue;
      const line = this.buffer.slice(start, index);
      if (character === '\r') {
        if (index + 1 === this.buffer.length) this.pendingCarriageReturn = true;
        else if (this.buffer[index + 1] === '\n') index += 1;
      }
      start = index + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.eventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    if (this.eventId !== undefined) this.lastEventId = this.eventId;
    const event =
      this.data.length === 0
        ? undefined
        : {
            data: this.data.join('\n'),
            ...(this.eventId !== undefined && { id: this.eventId }),
            ...(this.eventType !== undefined && { event: this.eventType }),
          };
    this.data = [];
    this.eventType = undefined;
    this.eventId = undefined;
    return event;
  }
}
