/**
 * The webhook endpoint of the delivery and replay phases: a plain `http.createServer` on 127.0.0.1 in the
 * bench process that answers 200 at once and records when each message arrived.
 *
 * It shares the machine (and the bench's event loop) with the load generator, so it does as little as
 * it can per request: no JSON parsing (the messageId is found by its key near the start of the body),
 * and `X-Signature` is checked on a sample only (the first request and every `SIGNATURE_SAMPLE_EVERY`th).
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const SIGNATURE_SAMPLE_EVERY = 1_000;
const MESSAGE_ID_KEY = Buffer.from('"messageId":"');
/** The bench's messageIds are analytics-node's `node-next-<epoch ms>-<uuid>`: they carry their send time. */
const SENT_AT_PREFIX = 'node-next-';

export interface ReceiverCounts {
  /** Requests answered (a message delivered twice counts twice). */
  requests: number;
  /** Distinct messageIds received. */
  distinctMessages: number;
  /** `Date.now()` of the first and last request whose body had fully arrived; null before any. */
  firstArrivalAt: number | null;
  lastArrivalAt: number | null;
  signaturesChecked: number;
  signatureMismatches: number;
  /** Bodies without a readable messageId (should stay 0). */
  unreadableBodies: number;
}

/**
 * What went wrong at a receiver that should have got `expected` distinct messages once each: lost,
 * duplicated, wrongly signed or unreadable. Empty when nothing did; every bench phase fails the run on these.
 */
/** Seconds from the first arrival to the last; 0 before two have come. */
export function arrivalSpanSeconds(counts: ReceiverCounts): number {
  if (counts.firstArrivalAt === null || counts.lastArrivalAt === null) return 0;
  return (counts.lastArrivalAt - counts.firstArrivalAt) / 1000;
}

export function receiverFailures(what: string, counts: ReceiverCounts, expected: number): string[] {
  const failures: string[] = [];
  if (counts.distinctMessages < expected)
    failures.push(
      `${what}: ${expected - counts.distinctMessages} of ${expected} messages lost (not received in time)`,
    );
  if (counts.requests > counts.distinctMessages)
    failures.push(`${what}: ${counts.requests - counts.distinctMessages} messages received more than once`);
  if (counts.signatureMismatches > 0)
    failures.push(
      `${what}: ${counts.signatureMismatches} of ${counts.signaturesChecked} sampled X-Signatures wrong`,
    );
  if (counts.unreadableBodies > 0)
    failures.push(`${what}: ${counts.unreadableBodies} bodies without a messageId`);
  return failures;
}

export class BenchWebhookReceiver {
  private readonly messageIds = new Set<string>();
  /** `performance.now()` of each message's first arrival, when asked for (`trackArrivals`). */
  private readonly arrivals = new Map<string, number>();
  private trackArrivals = false;
  /** Arrival minus send time, in ms, of every first arrival of a message with a send time in its id. */
  private readonly latencies: number[] = [];
  private counts: ReceiverCounts = BenchWebhookReceiver.emptyCounts();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly sharedSecret: string,
  ) {}

  static async start(name: string, sharedSecret: string): Promise<BenchWebhookReceiver> {
    const server = createServer({ keepAliveTimeout: 30_000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const receiver = new BenchWebhookReceiver(server, `http://127.0.0.1:${port}/${name}`, sharedSecret);
    server.on('request', (request: IncomingMessage, response: ServerResponse) =>
      receiver.handle(request, response),
    );
    return receiver;
  }

  snapshot(): ReceiverCounts {
    return { ...this.counts, distinctMessages: this.messageIds.size };
  }

  /** End-to-end latencies (arrival minus the send time in the messageId) in ms, in arrival order. */
  latenciesMs(): readonly number[] {
    return this.latencies;
  }

  /**
   * From now on, keeps each message's first arrival (`performance.now()`, the clock of the load loop),
   * for latencies measured from something other than the send time in the messageId.
   */
  keepArrivals(): void {
    this.trackArrivals = true;
  }

  /** The first arrival of a message kept since `keepArrivals`, in `performance.now()` ms. */
  arrivalOf(messageId: string): number | undefined {
    return this.arrivals.get(messageId);
  }

  /** Forgets everything received so far (the probe message that proves the pipeline works). */
  reset(): void {
    this.messageIds.clear();
    this.arrivals.clear();
    this.latencies.length = 0;
    this.counts = BenchWebhookReceiver.emptyCounts();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const arrivedAt = Date.now();
      const arrivedAtMonotonic = this.trackArrivals ? performance.now() : 0;
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      response.writeHead(200, { 'content-length': '0' });
      response.end();
      this.record(body, request.headers['x-signature'], arrivedAt, arrivedAtMonotonic);
    });
  }

  private record(
    body: Buffer,
    signature: string | string[] | undefined,
    arrivedAt: number,
    arrivedAtMonotonic: number,
  ): void {
    const counts = this.counts;
    counts.requests += 1;
    counts.firstArrivalAt ??= arrivedAt;
    counts.lastArrivalAt = arrivedAt;
    if (counts.requests % SIGNATURE_SAMPLE_EVERY === 1) {
      counts.signaturesChecked += 1;
      const expected = createHmac('sha1', this.sharedSecret).update(body).digest('hex');
      if (signature !== expected) counts.signatureMismatches += 1;
    }
    const keyAt = body.indexOf(MESSAGE_ID_KEY);
    const idStart = keyAt + MESSAGE_ID_KEY.length;
    const idEnd = keyAt < 0 ? -1 : body.indexOf(0x22 /* " */, idStart);
    if (idEnd < 0) {
      counts.unreadableBodies += 1;
      return;
    }
    const messageId = body.toString('latin1', idStart, idEnd);
    if (this.messageIds.has(messageId)) return;
    this.messageIds.add(messageId);
    if (this.trackArrivals) this.arrivals.set(messageId, arrivedAtMonotonic);
    if (messageId.startsWith(SENT_AT_PREFIX)) {
      const sentAt = Number(
        messageId.slice(SENT_AT_PREFIX.length, messageId.indexOf('-', SENT_AT_PREFIX.length)),
      );
      if (Number.isFinite(sentAt)) this.latencies.push(arrivedAt - sentAt);
    }
  }

  private static emptyCounts(): ReceiverCounts {
    return {
      requests: 0,
      distinctMessages: 0,
      firstArrivalAt: null,
      lastArrivalAt: null,
      signaturesChecked: 0,
      signatureMismatches: 0,
      unreadableBodies: 0,
    };
  }
}
