/** One event of a `text/event-stream`: its `id:` (when it has one) and its `data:` lines joined. */
export interface ParsedServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Splits the text received so far into complete events and the incomplete rest, which the caller
 * keeps and prefixes to the next chunk. Follows the event-stream format: events end with a blank line
 * (LF, CRLF or CR line ends), `:` starts a comment, several `data:` lines join with a line feed, one
 * space after the colon is dropped, and an event with no data is skipped.
 */
export function parseServerSentEvents(text: string): { events: ParsedServerSentEvent[]; rest: string } {
  const normalized = text.replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events: ParsedServerSentEvent[] = [];
  for (const block of blocks) {
    const data: string[] = [];
    const event: ParsedServerSentEvent = { data: '' };
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
    }
    if (data.length === 0) continue;
    event.data = data.join('\n');
    events.push(event);
  }
  return { events, rest };
}
