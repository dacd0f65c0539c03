import { parseServerSentEvents } from './server-sent-events';

/** One event of the live-events stream: its position in the log and the message as stored. */
export interface LiveEvent {
  id: number;
  message: Record<string, unknown>;
}

export interface LiveEventsHandlers {
  onEvent(event: LiveEvent): void;
  onStatus(status: 'connecting' | 'live' | 'reconnecting', detail?: string): void;
}

/**
 * Reads `GET …/live-events` with `fetch`, so the token travels in the Authorization header and never
 * in a URL (which `EventSource` would need). Parses the server-sent events itself, and reconnects
 * with `Last-Event-ID` after a drop, so no message is missed while the page stays open.
 * Returns a function that stops reading.
 */
export function followLiveEvents(
  path: string,
  authorization: string,
  handlers: LiveEventsHandlers,
): () => void {
  const controller = new AbortController();
  let lastEventId: number | undefined;
  let retryDelayMs = 1000;

  const readOnce = async (): Promise<void> => {
    handlers.onStatus(lastEventId === undefined ? 'connecting' : 'reconnecting');
    const response = await fetch(`/v1beta/${path}`, {
      headers: {
        authorization,
        accept: 'text/event-stream',
        ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
      },
      signal: controller.signal,
    });
    if (!response.ok || !response.body) {
      let detail = `HTTP ${response.status}`;
      try {
        const body = (await response.json()) as { error?: string };
        if (body.error) detail = `${detail}: ${body.error}`;
      } catch {
        // Not JSON: the status says enough.
      }
      throw Object.assign(new Error(detail), { fatal: response.status >= 400 && response.status < 500 });
    }
    handlers.onStatus('live');
    retryDelayMs = 1000;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const parsed = parseServerSentEvents(rest + value);
      rest = parsed.rest;
      for (const event of parsed.events) {
        const id = Number(event.id);
        if (event.id === undefined || !Number.isSafeInteger(id)) continue;
        lastEventId = id;
        try {
          handlers.onEvent({ id, message: JSON.parse(event.data) as Record<string, unknown> });
        } catch {
          // A message that is not JSON cannot be shown; the stream goes on.
        }
      }
    }
  };

  void (async () => {
    while (!controller.signal.aborted) {
      try {
        await readOnce();
        if (controller.signal.aborted) return;
        handlers.onStatus('reconnecting', 'the server closed the stream');
      } catch (error) {
        if (controller.signal.aborted) return;
        const fatal = (error as { fatal?: boolean }).fatal === true;
        handlers.onStatus('reconnecting', (error as Error).message);
        if (fatal) retryDelayMs = Math.max(retryDelayMs, 5000);
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
      retryDelayMs = Math.min(retryDelayMs * 2, 15_000);
    }
  })();

  return () => controller.abort();
}
