/**
 * One POST of a batch body: gzip when asked, a timeout, the authorization header. It answers what
 * happened; deciding about retries is the caller's business.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { RequestAuthorization } from './request-authorization';
import { VERSION } from './version';

const gzip = promisify(gzipCallback);

export type TransportResult =
  | { kind: 'response'; status: number; retryAfter: string | null; body: string }
  | { kind: 'network'; error: unknown }
  | { kind: 'timeout' }
  /** No credentials could be had (an OAuth token request failed for good); nothing was sent. */
  | { kind: 'unauthorized'; error: unknown };

export interface BatchTransport {
  post(body: string, attempt: number): Promise<TransportResult>;
}

export class HttpTransport implements BatchTransport {
  constructor(
    private readonly settings: { url: string; gzip: boolean; timeout: number },
    private readonly authorization: RequestAuthorization,
  ) {}

  async post(body: string, attempt: number): Promise<TransportResult> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `tributary-analytics-client/${VERSION}`,
    };
    let authorization: string | undefined;
    try {
      authorization = await this.authorization.authorizationHeader();
    } catch (error) {
      return { kind: 'unauthorized', error };
    }
    if (authorization !== undefined) headers.authorization = authorization;
    // Logged by the tracking API (docs/tracking-api.md §9.1); newer Segment clients send the same header.
    if (attempt > 0) headers['x-retry-count'] = String(attempt);
    let payload: string | Buffer = body;
    if (this.settings.gzip) {
      payload = await gzip(Buffer.from(body, 'utf8'));
      headers['content-encoding'] = 'gzip';
    }
    const signal = AbortSignal.timeout(this.settings.timeout);
    try {
      const response = await fetch(this.settings.url, { method: 'POST', headers, body: payload, signal });
      // The body is read to the end, also on success: the socket goes back to the keep-alive pool, and a
      // 200 may list rejected messages (docs/tracking-api.md §6.5).
      const text = await response.text();
      if ([400, 401, 403].includes(response.status))
        this.authorization.requestRefused(response.status, authorization);
      return {
        kind: 'response',
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: text,
      };
    } catch (error) {
      if (signal.aborted) return { kind: 'timeout' };
      return { kind: 'network', error };
    }
  }
}

/** `send: false` / `stub: true`: nothing leaves the process and every request "succeeds". */
export class StubTransport implements BatchTransport {
  async post(): Promise<TransportResult> {
    return { kind: 'response', status: 200, retryAfter: null, body: '{"success":true}' };
  }
}
