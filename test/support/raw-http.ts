// One HTTP request over loopback with node:http, so a test controls the exact bytes: any method, a
// path that fetch would normalise or refuse, header values with raw Latin-1 bytes, any body bytes.
import { request as httpRequest } from 'node:http';

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
