/**
 * The delivery ceiling: what the wire allows between this machine's Node and the bench's receiver.
 * A plain Node client (`delivery-ceiling.worker.js`, a thread of its own) POSTs the very bodies the
 * router sends (the stored form of the bench messages), signed the same way, to a receiver of the same
 * kind, `ROUTER_MAX_IN_FLIGHT` at a time, through undici's `dispatch` as the webhooks adapter sends.
 * Delivery and replay are reported as ratios to it. The same through `node:http` (`client`), the
 * ceiling's client until 2026-11-28, is measured beside it to compare with earlier figures.
 *
 * The client first sends `warmupRequests` other bodies, untimed, to a receiver of their own: a new
 * thread's first requests run cold code, and the phases this ceiling bounds run warm for 10 s and more.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BenchMessages } from './bench-messages';
import { round } from './load-loop';
import { arrivalSpanSeconds, BenchWebhookReceiver, receiverFailures } from './webhook-receiver';

/** undici's `dispatch`, as the webhooks adapter sends; or `node:http`, the ceiling's client until 2026-11-28. */
export type DeliveryCeilingClient = 'undici' | 'node:http';

export interface DeliveryCeilingResult {
  client: DeliveryCeilingClient;
  requests: number;
  concurrency: number;
  /** First to last arrival at the receiver, as delivery is measured. */
  spanSeconds: number;
  messagesPerSecond: number;
  signatureMismatches: number;
  /** CPU ms of the client's thread while it sent (the receiver runs in the bench's main thread). */
  clientCpuMs: number | null;
  /** Requests lost, duplicated or wrongly signed; the run fails on any. */
  failures: string[];
}

/** What the client's thread posts: warmed up (it then waits for 'go'), or done. */
interface WorkerMessage {
  warmedUp?: boolean;
  requests?: number;
  elapsedMs?: number;
  clientCpuMs?: number;
  error?: string;
}

export async function measureDeliveryCeiling(options: {
  messages: BenchMessages;
  sharedSecret: string;
  requests: number;
  /** Sent first, untimed, to a receiver of their own. */
  warmupRequests: number;
  concurrency: number;
  client: DeliveryCeilingClient;
  /** Called right before the timed requests and right after them (to read CPU over them alone). */
  timed?: { started(): void; ended(): void };
}): Promise<DeliveryCeilingResult> {
  const receiver = await BenchWebhookReceiver.start('ceiling', options.sharedSecret);
  const warmupReceiver = await BenchWebhookReceiver.start('ceiling-warmup', options.sharedSecret);
  try {
    const { payloads: warmupPayloads } = options.messages.storedBatch(options.warmupRequests);
    const { payloads } = options.messages.storedBatch(options.requests);
    const outcome = await new Promise<WorkerMessage>((resolve, reject) => {
      const worker = new Worker(join(__dirname, 'delivery-ceiling.worker.js'), {
        workerData: {
          url: receiver.url,
          warmupUrl: warmupReceiver.url,
          sharedSecret: options.sharedSecret,
          bodies: payloads,
          warmupBodies: warmupPayloads,
          concurrency: options.concurrency,
          client: options.client,
        },
      });
      worker.on('message', (message: WorkerMessage) => {
        if (message.warmedUp) {
          options.timed?.started();
          worker.postMessage('go');
          return;
        }
        options.timed?.ended();
        resolve(message);
        void worker.terminate();
      });
      worker.once('error', reject);
    });
    if (outcome.error) throw new Error(`the delivery ceiling's client failed: ${outcome.error}`);
    const counts = receiver.snapshot();
    const spanSeconds = arrivalSpanSeconds(counts);
    return {
      client: options.client,
      requests: counts.requests,
      concurrency: options.concurrency,
      spanSeconds: round(spanSeconds, 3),
      messagesPerSecond: spanSeconds > 0 ? Math.round(counts.distinctMessages / spanSeconds) : 0,
      signatureMismatches: counts.signatureMismatches,
      clientCpuMs: outcome.clientCpuMs ?? null,
      failures: [
        ...receiverFailures(`delivery ceiling (${options.client})`, counts, payloads.length),
        ...receiverFailures(
          `delivery ceiling's warm-up (${options.client})`,
          warmupReceiver.snapshot(),
          warmupPayloads.length,
        ),
      ],
    };
  } finally {
    await Promise.all([receiver.close(), warmupReceiver.close()]);
  }
}
