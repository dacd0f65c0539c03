import { CliError } from './cli-context';
import type { Connection } from './connection-options';

/** A Config API answer other than 2xx, with the `{error, code}` body the API always sends. */
export class ConfigApiRequestError extends CliError {
  constructor(
    readonly status: number,
    readonly grpcCode: number | undefined,
    readonly apiMessage: string,
  ) {
    super(`${apiMessage} (HTTP ${status}${grpcCode === undefined ? '' : `, code ${grpcCode}`})`);
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
    if (!this.connection.token) {
      throw new CliError(
        'no access token: set TRIBUTARY_TOKEN or pass --token-file (an instance-admin token for tokens and workspaces)',
      );
    }
    const url = `${this.connection.baseUrl}/v1beta/${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.connection.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new CliError(`cannot reach ${this.connection.baseUrl}: ${describeFetchError(error)}`);
    }
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
    if (parsed === undefined) throw new CliError(`${method} ${url}: the answer is not JSON`);
    return parsed as T;
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
