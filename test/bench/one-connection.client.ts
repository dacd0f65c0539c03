import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';

export interface TimedResponse {
  status: number;
  text: string;
  /** From handing the request to node:http to the last byte of the answer. */
  ms: number;
}

/**
 * Sequential HTTP requests over one keep-alive connection, each timed: what an operator's script or
 * a Terraform provider does against the Config API. One socket (`maxSockets: 1`) means every request,
 * of the API and of its baseline alike, pays the same client and connection costs; `connections`
 * tells whether the server kept it open (it should stay 1).
 */
export class OneConnectionClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly sockets = new WeakSet<Socket>();
  private socketCount = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly authorization: string,
  ) {}

  /** Connections opened so far. */
  get connections(): number {
    return this.socketCount;
  }

  /** `authorized: false` leaves the Authorization header off (for routes that need none). */
  request(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    options: { authorized?: boolean } = {},
  ): Promise<TimedResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = {
      'user-agent': 'tributary-config-bench',
      ...(options.authorized !== false && { authorization: this.authorization }),
      ...(payload !== undefined && {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      }),
    };
    return new Promise((resolve, reject) => {
      const startedAt = performance.now();
      const outgoing = request(
        new URL(path, this.baseUrl),
        { method, agent: this.agent, headers },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
              ms: performance.now() - startedAt,
            }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('socket', (socket: Socket) => {
        if (!this.sockets.has(socket)) {
          this.sockets.add(socket);
          this.socketCount += 1;
        }
      });
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
