/**
 * The delivery ceiling: what the wire allows between this machine's Node and the bench's receiver.
 * A plain Node client (`delivery-ceiling.worker.js`, a thread of its own) POSTs the very bodies the
 * router sends (the stored form of the bench messages), signed the same way, to a receiver of the same
 * kind, `ROUTER_MAX_IN_FLIGHT` at a time, through undici's `dispatch` as the webhooks adapter sends.
 * Delivery and replay are reported as ratios to it. The same through `node:http` (`client`), the
 * ceiling's client until 2026-11-28, is measured beside it to compare with earlier figures.
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

export async function measureDeliveryCeiling(options: {
  messages: BenchMessages;
  sharedSecret: string;
  requests: number;
  concurrency: number;
  client: DeliveryCeilingClient;
}): Promise<DeliveryCeilingResult> {
  const receiver = await BenchWebhookReceiver.start('ceiling', options.sharedSecret);
  try {
    const { payloads } = options.messages.storedBatch(options.requests);
    const outcome = await new Promise<{
      requests?: number;
      elapsedMs?: number;
      clientCpuMs?: number;
      error?: string;
    }>((resolve, reject) => {
      const worker = new Worker(join(__dirname, 'delivery-ceiling.worker.js'), {
        workerData: {
          url: receiver.url,
          sharedSecret: options.sharedSecret,
          bodies: payloads,
          concurrency: options.concurrency,
          client: options.client,
        },
      });
      worker.once('message', (message) => {
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
      failures: receiverFailures(`delivery ceiling (${options.client})`, counts, payloads.length),
    };
  } finally {
    await receiver.close();
  }
}
