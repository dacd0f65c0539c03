// Test helpers for the client's end-to-end suites: a recording HTTP proxy that sits in front of the real
// tracking API (to count and measure requests, and to inject failures where a test needs them), and a
// collector for onError reports.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { AnalyticsError, AnalyticsMessage } from '../src';

export interface RecordedRequest {
  index: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as received (gzip still applied). */
  rawBody: Buffer;
  /** The body inflated when it was gzipped: what the server measures. */
  jsonBody: string;
  startedAt: number;
  finishedAt?: number;
  status?: number;
}

/** What the proxy does with request number `index` (0-based). */
export type ProxyAnswer =
  | { forward: true; delayMs?: number }
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | { hang: true };

export interface RecordingProxy {
  url: string;
  requests: RecordedRequest[];
  /** The most requests that were open at one moment. */
  maxConcurrent: number;
  /** The envelopes received, parsed. */
  bodies(): Array<{ batch: any[]; sentAt: string; writeKey: string }>;
  close(): Promise<void>;
}

export async function startRecordingProxy(
  targetBaseUrl: string | undefined,
  answer: (index: number, request: RecordedRequest) => ProxyAnswer = () => ({ forward: true }),
): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  let open = 0;
  const state = { maxConcurrent: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      open += 1;
      state.maxConcurrent = Math.max(state.maxConcurrent, open);
      const rawBody = Buffer.concat(chunks);
      const record: RecordedRequest = {
        index: requests.length,
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawBody,
        jsonBody: (request.headers['content-encoding'] === 'gzip' ? gunzipSync(rawBody) : rawBody).toString(
          'utf8',
        ),
        startedAt: Date.now(),
      };
      requests.push(record);
      const decision = answer(record.index, record);
      const finish = (status: number, headers: Record<string, string>, body: string) => {
        record.finishedAt = Date.now();
        record.status = status;
        open -= 1;
        response.writeHead(status, headers).end(body);
      };
      try {
        if ('hang' in decision) {
          // Never answers; the client's timeout must end the request. Counted as closed when it does.
          response.on('close', () => {
            open -= 1;
          });
          return;
        }
        if (decision.delayMs) await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
        if ('forward' in decision) {
          if (targetBaseUrl === undefined) throw new Error('this proxy has no target to forward to');
          const forwarded = await fetch(`${targetBaseUrl}${record.url}`, {
            method: record.method,
            headers: pickHeaders(request.headers, [
              'content-type',
              'content-encoding',
              'authorization',
              'user-agent',
            ]),
            body: rawBody,
          });
          finish(
            forwarded.status,
            { 'content-type': forwarded.headers.get('content-type') ?? 'application/json' },
            await forwarded.text(),
          );
        } else {
          finish(
            decision.status,
            { 'content-type': 'application/json', ...decision.headers },
            decision.body ?? '{}',
          );
        }
      } catch (error) {
        finish(599, { 'content-type': 'text/plain' }, `proxy failure: ${String(error)}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxConcurrent() {
      return state.maxConcurrent;
    },
    bodies: () => requests.map((request) => JSON.parse(request.jsonBody)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function pickHeaders(headers: IncomingHttpHeaders, names: string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

export function errorRecorder() {
  const reports: Array<{ error: AnalyticsError; batch: readonly AnalyticsMessage[]; at: number }> = [];
  return {
    reports,
    onError: (error: AnalyticsError, batch: readonly AnalyticsMessage[]) =>
      reports.push({ error, batch, at: Date.now() }),
  };
}

/** Options that keep the suites fast: short waits everywhere, no log noise. */
export const FAST = {
  flushInterval: 20,
  retryBackoff: { initialDelayMs: 10, maxDelayMs: 40 },
  logLevel: 'silent',
} as const;

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
