import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from './metrics.registry';

/** Where the Prometheus scrape endpoint listens (`METRICS_HOST`, `METRICS_PORT`; port 0: any free port). */
export interface MetricsListenerOptions {
  port: number;
  host: string;
}

/**
 * `GET /metrics` on a listener of its own, never on the public port: the series name every route,
 * destination and source id of the instance, and a scrape costs a store read, so only the operator's
 * network (a loopback or private interface by default) may reach it. Anything else here is a 404.
 */
export class MetricsListener {
  private server: Server | undefined;
  private listeningUrl: string | undefined;

  constructor(
    private readonly registry: MetricsRegistry,
    private readonly options: MetricsListenerOptions,
  ) {}

  /** The scrape URL (`http://host:port/metrics`) once listening. */
  get url(): string | undefined {
    return this.listeningUrl;
  }

  async start(): Promise<string> {
    if (this.listeningUrl) return this.listeningUrl;
    const server = createServer((request, response) => void this.answer(request, response));
    // A scrape is one small request: a slow or silent client must not keep a socket for long.
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.options.port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      // The process stops at start; the message names the settings to change.
      throw new Error(
        `cannot serve /metrics on ${this.options.host}:${this.options.port} (METRICS_HOST, METRICS_PORT): ` +
          (error as Error).message,
      );
    }
    this.server = server;
    const { address, port } = server.address() as AddressInfo;
    const host = address.includes(':') ? `[${address}]` : address;
    this.listeningUrl = `http://${host}:${port}/metrics`;
    return this.listeningUrl;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.listeningUrl = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return this.send(response, 404, 'application/json', '{"error":"not found"}');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return this.send(response, 405, 'application/json', '{"error":"method not allowed"}');
    }
    try {
      const text = await this.registry.metrics();
      this.send(response, 200, this.registry.contentType, request.method === 'HEAD' ? '' : text);
    } catch (error) {
      this.send(response, 500, 'text/plain', `metrics collection failed: ${(error as Error).message}`);
    }
  }

  private send(response: ServerResponse, status: number, contentType: string, body: string): void {
    response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
    response.end(body);
  }
}
