/**
 * The seam for request authorization. Today every request carries `Authorization: Basic base64(writeKey:)`
 * (and the write key in the body, spec §4). OAuth (spec §11) will add a provider that fetches and caches a
 * Bearer token and drops it when the server answers 400/401/403; the transport only asks for a header
 * and reports those statuses, so nothing else changes then.
 */
export interface RequestAuthorization {
  /** The `Authorization` header for the next request, or undefined for none. */
  authorizationHeader(): Promise<string | undefined>;
  /** The server refused a request with this status; a token-based provider clears its cached token. */
  requestRefused(status: number): void;
}

export class WriteKeyAuthorization implements RequestAuthorization {
  private readonly header: string;

  constructor(writeKey: string) {
    this.header = `Basic ${Buffer.from(`${writeKey}:`, 'utf8').toString('base64')}`;
  }

  async authorizationHeader(): Promise<string | undefined> {
    return this.header;
  }

  requestRefused(): void {
    // A write key has nothing cached to drop.
  }
}

/**
 * The one place that picks how requests are authorized. OAuth (a later change) adds its options to
 * `AnalyticsOptions` and returns its token provider from here when they are set.
 */
export function authorizationFor(options: { writeKey: string }): RequestAuthorization {
  return new WriteKeyAuthorization(options.writeKey);
}
