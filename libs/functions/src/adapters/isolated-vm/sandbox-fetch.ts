/**
 * `fetch` as a function's sandbox asks for it, performed here, outside the isolate, through the egress
 * guard (`docs/egress.md`): every connection, and every redirect hop's, goes to an address the policy
 * allows (names resolve through the guard, IP literals are checked before the socket is made). Only
 * `http:` and `https:`; at most `MAX_REDIRECTS` redirects; the body is read up to `MAX_BODY_BYTES`.
 * Errors carry the message the sandbox's `TypeError` will have: `egress_denied: <why>` for a refusal.
 */
import { EgressGuard } from '@tributary/destinations';
import { Agent, buildConnector } from 'undici';

export const MAX_FETCH_REDIRECTS = 5;
export const MAX_FETCH_BODY_BYTES = 5 * 1024 * 1024;

/** What the sandbox sends: copies of strings and bytes only. */
export interface SandboxFetchRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | Uint8Array | null;
  readonly redirect: string;
}

export interface SandboxFetchAnswer {
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly redirected: boolean;
  readonly headers: [string, string][];
  readonly body: Uint8Array;
  /** Set when the body passed the cap: reading it rejects with this message. */
  readonly tooLarge?: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers the sandbox may not set: the host frames the request. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
]);

export class SandboxFetcher {
  private readonly agent: Agent;

  constructor(
    private readonly guard: EgressGuard,
    private readonly timeoutMs: number,
  ) {
    const connect = buildConnector({ lookup: guard.lookup, timeout: timeoutMs });
    this.agent = new Agent({
      connect: (options, callback) => {
        const refusal = this.guard.refusalOfLiteral(options.hostname);
        if (refusal) {
          callback(refusal, null);
          return;
        }
        connect(options, callback);
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  }

  async fetch(request: SandboxFetchRequest, signal: AbortSignal): Promise<SandboxFetchAnswer> {
    let url = parseTarget(request.url);
    let method = request.method;
    let body = request.body;
    const headers: Record<string, string> = {};
    for (const [name, value] of request.headers) {
      if (!FORBIDDEN_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    }
    for (let hops = 0; ; hops++) {
      const answer = await this.once(url, method, headers, body, signal);
      const location = answer.headers.location;
      if (
        !REDIRECT_STATUSES.has(answer.statusCode) ||
        request.redirect === 'manual' ||
        location === undefined
      ) {
        return this.read(url, answer, hops > 0, signal);
      }
      await answer.body.dump().catch(() => undefined);
      if (request.redirect === 'error')
        throw new Error(`redirect refused: ${answer.statusCode} to ${String(location)}`);
      if (hops >= MAX_FETCH_REDIRECTS)
        throw new Error(`too many redirects (more than ${MAX_FETCH_REDIRECTS})`);
      url = parseTarget(String(location), url);
      if (
        answer.statusCode === 303 ||
        ((answer.statusCode === 301 || answer.statusCode === 302) && method === 'POST')
      ) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = null;
        delete headers['content-type'];
      }
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }

  private async once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | Uint8Array | null,
    signal: AbortSignal,
  ) {
    try {
      return await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: method as never,
        headers,
        body: body ?? undefined,
        signal,
      });
    } catch (error) {
      throw new Error(describe(error));
    }
  }

  private async read(
    url: URL,
    answer: Awaited<ReturnType<Agent['request']>>,
    redirected: boolean,
    signal: AbortSignal,
  ): Promise<SandboxFetchAnswer> {
    const headers: [string, string][] = [];
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const each of value) headers.push([name, each]);
      else if (value !== undefined) headers.push([name, value]);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge: string | undefined;
    try {
      for await (const chunk of answer.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_FETCH_BODY_BYTES) {
          tooLarge = `the response body is larger than ${MAX_FETCH_BODY_BYTES} bytes`;
          answer.body.destroy();
          break;
        }
        chunks.push(chunk as Buffer);
        if (signal.aborted) break;
      }
    } catch (error) {
      throw new Error(describe(error));
    }
    const all = tooLarge ? new Uint8Array(0) : new Uint8Array(Buffer.concat(chunks));
    return {
      url: url.href,
      status: answer.statusCode,
      statusText: '',
      redirected,
      headers,
      body: all,
      ...(tooLarge !== undefined && { tooLarge }),
    };
  }
}

function parseTarget(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new Error(`Invalid URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`egress_denied: only http and https URLs may be fetched, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') throw new Error('URLs with credentials may not be fetched');
  return url;
}

/** The sandbox's error message: egress refusals keep the guard's reason, others say what failed. */
function describe(error: unknown): string {
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && cause; depth++) {
    if ((cause as { code?: string }).code === 'EGRESS_DENIED') {
      const denied = cause as { hostName: string; detail: string };
      return `egress_denied: ${denied.hostName}: ${denied.detail}`;
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  if ((error as { name?: string }).name === 'AbortError') return 'fetch aborted: the function ended';
  const code = (error as { code?: string }).code;
  return `fetch failed: ${code ?? (error as Error).message ?? String(error)}`;
}
