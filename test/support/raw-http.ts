// One HTTP request over loopback with node:http, so a test controls the exact bytes: any method, a
// path that fetch would normalise or refuse, header values with raw Latin-1 bytes, any body bytes.
// `rawExchange` goes below node:http, to a bare TCP socket, for what no HTTP client sends.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  /** Sent as it is on the request line: no normalisation, no percent-encoding. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body; `undefined` when the body is empty or not JSON. */
  body: unknown;
}

export function rawRequest(port: number, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body as Uint8Array);
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.path,
        // A fresh connection per request: one broken exchange cannot poison the next.
        agent: false,
        headers: {
          ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          ...request.headers,
        },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text, body: parsed });
        });
      },
    );
    outgoing.setTimeout(10_000, () =>
      outgoing.destroy(new Error(`no answer to ${request.method} ${request.path}`)),
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A short description of a response for failure messages: the status and the start of the body. */
export function describeResponse(request: RawRequest, response: RawResponse): string {
  const sent = `${request.method} ${request.path.slice(0, 200)} ${JSON.stringify(request.headers ?? {}).slice(0, 300)}`;
  return `${sent} -> ${response.status} ${response.text.slice(0, 300)}`;
}

/** One response read back from the raw bytes of a connection. */
export interface ParsedResponse {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  text: string;
  /** The parsed JSON body; `undefined` when the body is empty or not JSON. */
  body: unknown;
}

export interface RawExchange {
  /** Every byte the server sent, as Latin-1 text. */
  raw: string;
  /** The responses in `raw`, in order (a response to HEAD has no body: see `headRequests`). */
  responses: ParsedResponse[];
  /** Whether the server closed the connection (rather than the client timing out). */
  closedByServer: boolean;
  /** The client's own socket error, when the server reset the connection. */
  socketError?: string;
}

export interface RawExchangeOptions {
  /** Pause between the parts, so each arrives in its own read on the server. */
  pauseMs?: number;
  /** After the last part: `end` half-closes (FIN) and keeps reading, `reset` destroys with RST. */
  finish?: 'end' | 'reset';
  /** How long to wait for the server to close; then the client closes (closedByServer: false). */
  timeoutMs?: number;
  /** How many of the responses answer HEAD requests and so carry no body, counted from the first. */
  headRequests?: number;
}

/**
 * Bytes written straight to a TCP socket, for what node:http will not send (a malformed request
 * line, a header too large for the server, a lying Content-Length, a body cut short, HTTP/1.0),
 * and everything the server sends back until it closes the connection.
 */
export function rawExchange(
  port: number,
  parts: (string | Uint8Array)[],
  options: RawExchangeOptions = {},
): Promise<RawExchange> {
  const { pauseMs = 30, finish, timeoutMs = 5_000, headRequests = 0 } = options;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = true;
    let socketError: string | undefined;
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => (socketError = error.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      resolve({ raw, responses: parseResponses(raw, headRequests), closedByServer, socketError });
    });
    void (async () => {
      for (const [index, part] of parts.entries()) {
        if (socket.destroyed) return;
        if (index > 0) await new Promise((wait) => setTimeout(wait, pauseMs));
        socket.write(part);
      }
      if (finish === 'end') socket.end();
      if (finish === 'reset') {
        await new Promise((wait) => setTimeout(wait, pauseMs));
        socket.resetAndDestroy();
      }
    })();
  });
}

/** Splits raw response bytes into responses by their Content-Length (every Tributary answer has one). */
export function parseResponses(raw: string, headRequests = 0): ParsedResponse[] {
  const responses: ParsedResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new Error(`an incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...headerLines] = rest.slice(0, headEnd).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!status) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = responses.length < headRequests ? 0 : Number(headers['content-length'] ?? 0);
    const bodyBytes = Buffer.from(rest.slice(headEnd + 4), 'latin1').subarray(0, length);
    const text = bodyBytes.toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    responses.push({ status: Number(status[1]), headers, text, body });
    rest = rest.slice(headEnd + 4 + bodyBytes.toString('latin1').length);
  }
  return responses;
}

/**
 * `rawRequest` written to a bare socket: the method goes as given (node:http upper-cases it), any
 * HTTP version, Host only when the headers carry one, `connection: close`. The answer is the first
 * response the server sent; status 0 when it closed without one.
 */
export async function rawSocketRequest(
  port: number,
  request: RawRequest & { version?: string },
): Promise<RawResponse> {
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body as Uint8Array);
  const headers = {
    ...request.headers,
    ...(request.body === undefined ? {} : { 'content-length': String(body.length) }),
    connection: 'close',
  };
  const head =
    `${request.method} ${request.path} ${request.version ?? 'HTTP/1.1'}\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  const exchange = await rawExchange(port, [Buffer.concat([Buffer.from(head, 'latin1'), body])], {
    headRequests: request.method === 'HEAD' ? 1 : 0,
    timeoutMs: 10_000,
  });
  const [response] = exchange.responses;
  if (!response) return { status: 0, headers: {}, text: exchange.raw, body: undefined };
  return response;
}
