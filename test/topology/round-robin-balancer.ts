/**
 * The load balancer in front of the tracking API replicas, as an operator puts one there (nginx in
 * docker-compose.cluster.yml, configured the same way): each request goes to the next replica in
 * turn; one whose connection is refused or dropped before it answered, or that answers 503, is tried
 * on the next replica (a request is a batch of messages with their ids, so sending it twice stores it
 * once), and when none answers the balancer answers the documented back-pressure 503 with
 * `Retry-After`, which Segment's clients retry. It counts every status it answered.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export class RoundRobinBalancer {
  /** How many answers of each status the balancer gave its clients. */
  readonly statuses = new Map<number, number>();
  private next = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly upstreams: readonly string[],
  ) {}

  /** Listens on a free loopback port and balances over `upstreams` (base URLs). */
  static async start(upstreams: readonly string[]): Promise<RoundRobinBalancer> {
    const server = createServer();
    // Each client request is answered in full before the balancer looks at the next one on the socket.
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const balancer = new RoundRobinBalancer(server, `http://127.0.0.1:${port}`, upstreams);
    server.on('request', (request, response) => void balancer.handle(request, response));
    return balancer;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const first = this.next++ % this.upstreams.length;
    for (let tried = 0; tried < this.upstreams.length; tried++) {
      const upstream = this.upstreams[(first + tried) % this.upstreams.length];
      const answer = await forward(upstream, request, body).catch(() => undefined);
      // A replica that answers 503 (starting, its dedupe index catching up) is passed over too, as
      // long as another is left to try; the last one's 503 goes to the client.
      const lastTry = tried === this.upstreams.length - 1;
      if (answer && (answer.status !== 503 || lastTry)) {
        this.count(answer.status);
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
        return;
      }
    }
    this.count(503);
    response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
    response.end(JSON.stringify({ error: 'unavailable', message: 'no tracking API replica answered' }));
  }

  private count(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }
}

interface UpstreamAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One try against one replica; rejects when the connection fails before a whole answer arrived. */
function forward(upstream: string, request: IncomingMessage, body: Buffer): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...request.headers, 'content-length': String(body.length) };
    delete headers.host;
    delete headers.connection;
    const outgoing = httpRequest(
      `${upstream}${request.url ?? '/'}`,
      { method: request.method, headers, timeout: 30_000 },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('aborted', () => reject(new Error('answer cut short')));
        incoming.on('end', () => {
          const answerHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined && name !== 'connection' && name !== 'transfer-encoding') {
              answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
            }
          }
          resolve({
            status: incoming.statusCode ?? 502,
            headers: answerHeaders,
            body: Buffer.concat(chunks),
          });
        });
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('upstream timed out')));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
