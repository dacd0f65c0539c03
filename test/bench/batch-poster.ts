import { Agent, request } from 'node:http';

/**
 * POSTs `/v1/batch` bodies as analytics-node does (write key as Basic auth and in the body) over
 * keep-alive connections, and resolves to the number of messages the server stored.
 */
export class BatchPoster {
  private readonly url: URL;
  private readonly agent: Agent;
  private readonly authorization: string;

  constructor(baseUrl: string, writeKey: string, concurrency: number) {
    this.url = new URL('/v1/batch', baseUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    this.authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
  }

  /** The messages of the batch that were stored; throws `HttpFailure` unless the answer is 200. */
  async send(body: string, batchSize: number): Promise<number> {
    const { status, text } = await this.post(body);
    if (status !== 200) throw new HttpFailure(status, text);
    // A 200 may still list rejected messages (docs/tracking-api.md §6.5); those were not stored.
    const rejected = text.includes('"rejected"') ? (JSON.parse(text).rejected?.length ?? 0) : 0;
    return batchSize - rejected;
  }

  close(): void {
    this.agent.destroy();
  }

  private post(body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: this.authorization,
            'user-agent': 'tributary-ingest-bench',
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }
}

export class HttpFailure extends Error {
  constructor(status: number, body: string) {
    super(`HTTP ${status} ${body.slice(0, 120)}`);
    this.name = 'HttpFailure';
  }
}
