// How a request is authorized, in a file of its own: both providers implement it, and the file that
// chooses between them imports them.
export interface RequestAuthorization {
  /**
   * The `Authorization` header for the next request, or undefined for none. May reject (with an
   * `OAuthTokenError`) when no token can be had; the batch is then given up.
   */
  authorizationHeader(): Promise<string | undefined>;
  /**
   * The server refused a request that carried `sentHeader` with this status; a token-based provider
   * clears that token, if it still caches it.
   */
  requestRefused(status: number, sentHeader: string | undefined): void;
}
