/**
 * The seam for request authorization. With a write key alone, every request carries
 * `Authorization: Basic base64(writeKey:)` (and the write key in the body, docs/tracking-api.md §4). With OAuth (docs/tracking-api.md §11),
 * a provider fetches and caches a Bearer token and drops it when the server answers 400/401/403; the
 * transport only asks for a header and reports those statuses.
 */
import type { LeveledLogger } from './leveled-logger';
import { OAuthAuthorization, type OAuthClock } from './oauth-authorization';
import type { ResolvedOptions } from './options';
import type { RequestAuthorization } from './request-authorization';

export type { RequestAuthorization } from './request-authorization';

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

/** The one place that picks how requests are authorized: OAuth when its options are set. */
export function authorizationFor(
  options: Pick<ResolvedOptions, 'writeKey' | 'oauth' | 'timeout' | 'maxRetries' | 'retryBackoff'>,
  log?: LeveledLogger,
  clock?: OAuthClock,
): RequestAuthorization {
  if (options.oauth !== undefined) return new OAuthAuthorization(options.oauth, options, log, clock);
  return new WriteKeyAuthorization(options.writeKey);
}
