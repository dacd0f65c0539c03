/**
 * A failing destination beside a healthy one: one source with a healthy webhook alone, then another
 * source with a healthy webhook and a second webhook whose receiver takes connections and never
 * answers (each attempt ends with the 5 s timeout, then a retry). Both runs get the same load; the
 * healthy destination's delivery rate should not move (goal: within 10 %).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { BatchPoster } from './batch-poster';
import { createBenchMessages } from './bench-messages';
import type { ConfigApiClient } from '../support/config-api.client';
import { createSource, createWebhookDestination } from './bench-resources';
import { round, runClosedLoop } from './load-loop';
import { arrivalSpanSeconds, BenchWebhookReceiver, receiverFailures } from './webhook-receiver';

export interface IsolationRun {
  acceptedMessages: number;
  deliveredMessages: number;
  messagesPerSecond: number;
  /** The healthy destination's messages lost, duplicated or wrongly signed; the run fails on any. */
  failures: string[];
}

export interface FailingDestinationResult {
  alone: IsolationRun;
  besideFailing: IsolationRun;
  /** besideFailing ÷ alone: 1 means the failing destination took nothing away. */
  ratio: number;
  /** Requests the silent receiver took while the second run lasted. */
  failingRequests: number;
}

/** Accepts connections, reads what comes and never answers: every request times out. */
async function startSilentReceiver(): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      if (chunk.includes('POST ')) requests += 1;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/silent`,
    requests: () => requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function measureFailingDestination(options: {
  api: ConfigApiClient;
  workspace: string;
  baseUrl: string;
  sharedSecret: string;
  settings: { seconds: number; concurrency: number; batchSize: number; drainTimeoutSeconds: number };
}): Promise<FailingDestinationResult> {
  const silent = await startSilentReceiver();
  try {
    const alone = await runOne(options, 'isolation-alone', undefined);
    const besideFailing = await runOne(options, 'isolation-failing', silent.url);
    return {
      alone,
      besideFailing,
      ratio:
        alone.messagesPerSecond > 0 ? round(besideFailing.messagesPerSecond / alone.messagesPerSecond, 3) : 0,
      failingRequests: silent.requests(),
    };
  } finally {
    await silent.close();
  }
}

async function runOne(
  options: Parameters<typeof measureFailingDestination>[0],
  sourceSlug: string,
  failingUrl: string | undefined,
): Promise<IsolationRun> {
  const { api, workspace, settings } = options;
  const writeKey = await createSource(api, workspace, sourceSlug);
  const messages = createBenchMessages(writeKey);
  const poster = new BatchPoster(options.baseUrl, writeKey, settings.concurrency);
  const receiver = await BenchWebhookReceiver.start(sourceSlug, options.sharedSecret);
  try {
    await createWebhookDestination(api, workspace, sourceSlug, 'webhooks', {
      url: receiver.url,
      sharedSecret: options.sharedSecret,
      enabled: true,
    });
    if (failingUrl) {
      await createWebhookDestination(api, workspace, sourceSlug, 'webhooks-failing', {
        url: failingUrl,
        sharedSecret: options.sharedSecret,
        enabled: true,
      });
    }
    // The probe: both consumers are running before the clock does.
    await poster.send(messages.batchBody(1), 1);
    await waitFor(() => receiver.snapshot().distinctMessages >= 1, 15_000);
    receiver.reset();
    const ingest = await runClosedLoop({
      concurrency: settings.concurrency,
      warmupSeconds: 0,
      seconds: settings.seconds,
      send: () => poster.send(messages.batchBody(settings.batchSize), settings.batchSize),
    });
    await waitFor(
      () => receiver.snapshot().distinctMessages >= ingest.acceptedMessages,
      settings.drainTimeoutSeconds * 1000,
    );
    const counts = receiver.snapshot();
    const span = arrivalSpanSeconds(counts);
    return {
      acceptedMessages: ingest.acceptedMessages,
      deliveredMessages: counts.distinctMessages,
      messagesPerSecond: span > 0 ? Math.round(counts.distinctMessages / span) : 0,
      failures: receiverFailures(`healthy webhook (${sourceSlug})`, counts, ingest.acceptedMessages),
    };
  } finally {
    await poster.close();
    await receiver.close();
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
