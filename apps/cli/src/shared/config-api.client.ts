import { CliError, EXIT } from './cli-context';
import type { Connection } from './connection-options';

/** A Config API answer other than 2xx, with the `{error, code}` body the API always sends. */
export class ConfigApiRequestError extends CliError {
  constructor(
    readonly status: number,
    readonly grpcCode: number | undefined,
    readonly apiMessage: string,
  ) {
    super(
      `${apiMessage} (HTTP ${status}${grpcCode === undefined ? '' : `, code ${grpcCode}`})`,
      EXIT.refused,
    );
  }
}

/** No answer at all: the server is down, the name does not resolve, or the request timed out. */
export class ServerUnreachableError extends CliError {
  constructor(baseUrl: string, error: unknown) {
    super(`cannot reach ${baseUrl}: ${describeFetchError(error)}`, EXIT.unreachable);
  }
}

/** The Config API (`/v1beta`) over HTTP with a bearer token; nothing else of the server is used. */
export class ConfigApiClient {
  constructor(private readonly connection: Connection) {}

  async request<T = any>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const url = `${this.connection.baseUrl}/v1beta/${path}`;
    const response = await this.send(url, {
      method,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const message =
        typeof parsed?.error === 'string' ? parsed.error : text.slice(0, 200) || response.statusText;
      throw new ConfigApiRequestError(
        response.status,
        typeof parsed?.code === 'number' ? parsed.code : undefined,
        message,
      );
    }
    if (parsed === undefined) throw new CliError(`${method} ${url}: the answer is not JSON`, EXIT.refused);
    return parsed as T;
  }

  /**
   * A `text/event-stream` route, open until the server ends it or `signal` aborts: its body is
   * the caller's to read. A refusal is read like any other (`ConfigApiRequestError`).
   */
  async openStream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    const response = await this.send(`${this.connection.baseUrl}/v1beta/${path}`, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...headers },
      signal,
    });
    if (response.ok && response.body) return response;
    const text = await response.text().catch(() => '');
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    throw new ConfigApiRequestError(
      response.status,
      typeof parsed?.code === 'number' ? parsed.code : undefined,
      typeof parsed?.error === 'string' ? parsed.error : text.slice(0, 200) || response.statusText,
    );
  }

  private async send(
    url: string,
    init: RequestInit & { headers: Record<string, string> },
  ): Promise<Response> {
    if (!this.connection.token) {
      throw new CliError(
        'no access token: set TRIBUTARY_TOKEN or pass --token-file (an instance-admin token for tokens and workspaces)',
      );
    }
    try {
      return await fetch(url, {
        ...init,
        headers: { authorization: `Bearer ${this.connection.token}`, ...init.headers },
      });
    } catch (error) {
      // The caller stopped it (Ctrl-C on `tail`): not a server that cannot be reached.
      if (init.signal?.aborted && init.signal.reason?.name !== 'TimeoutError') throw error;
      throw new ServerUnreachableError(this.connection.baseUrl, error);
    }
  }

  /** Every item of a paginated list, following `next_page_token` until it is empty. */
  async listAll<T = any>(path: string, key: string): Promise<T[]> {
    const items: T[] = [];
    let pageToken = '';
    for (let page = 0; page < 10_000; page++) {
      const query = new URLSearchParams({ page_size: '1000', ...(pageToken && { page_token: pageToken }) });
      const body = await this.request<Record<string, any>>('GET', `${path}?${query}`);
      items.push(...((body[key] as T[] | undefined) ?? []));
      pageToken = body.next_page_token ?? '';
      if (!pageToken) break;
    }
    return items;
  }
}

export function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error)
      return `${error.message}: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`;
    return error.message;
  }
  return String(error);
}
