import type { ConfigApiErrorBody } from '@tributary/contracts';

/** A failed call, with a sentence a person can act on. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const STATUS_WORDS: Record<number, string> = {
  400: 'The server refused the request',
  401: 'You are not signed in, or the access token is no longer valid',
  403: 'This access token is not allowed to do that',
  404: 'Not found',
  409: 'That conflicts with what exists already',
  429: 'Too many requests; wait a moment and try again',
  500: 'The server failed',
  501: 'The server does not offer this',
  503: 'The server is temporarily unavailable; try again shortly',
};

export function describeFailure(status: number, body: Partial<ConfigApiErrorBody> | undefined): string {
  const words = STATUS_WORDS[status] ?? `The server answered HTTP ${status}`;
  return body?.error ? `${words}: ${body.error}` : `${words}.`;
}

export type Authorization =
  { kind: 'bearer'; token: string } | { kind: 'basic'; email: string; password: string };

/** Calls `/v1beta`; every failure becomes an `ApiError` whose message says what went wrong. */
export class ApiClient {
  constructor(
    private readonly authorization: Authorization,
    private readonly onUnauthenticated: () => void = () => undefined,
  ) {}

  authorizationHeader(): string {
    return this.authorization.kind === 'bearer'
      ? `Bearer ${this.authorization.token}`
      : `Basic ${btoa(unescape(encodeURIComponent(`${this.authorization.email}:${this.authorization.password}`)))}`;
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`/v1beta/${path}`, {
        method,
        headers: {
          authorization: this.authorizationHeader(),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(`Cannot reach the server: ${(error as Error).message}`, 0);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      if (response.status === 401) this.onUnauthenticated();
      const errorBody = parsed as Partial<ConfigApiErrorBody> | undefined;
      throw new ApiError(describeFailure(response.status, errorBody), response.status, errorBody?.code);
    }
    return parsed as T;
  }

  get = <T>(path: string, signal?: AbortSignal) => this.request<T>('GET', path, undefined, signal);
  post = <T>(path: string, body?: unknown) => this.request<T>('POST', path, body ?? {});
  patch = <T>(path: string, body: unknown) => this.request<T>('PATCH', path, body);
  put = <T>(path: string, body: unknown) => this.request<T>('PUT', path, body);
  delete = <T>(path: string) => this.request<T>('DELETE', path);
}
