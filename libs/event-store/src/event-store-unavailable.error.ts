/** The event store could not be read or written; nothing of the command was stored. */
export class EventStoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the event store is unavailable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'EventStoreUnavailableError';
  }
}
