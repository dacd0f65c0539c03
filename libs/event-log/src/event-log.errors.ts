/** The log cannot be reached (or is closed): the HTTP layer answers 503 with `Retry-After`. */
export class EventLogUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventLogUnavailableError';
  }
}
