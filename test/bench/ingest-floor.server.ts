/**
 * The ingest floor's server (phase 1c of `ingest.phase.ts`): the least any service that takes `/v1/batch`
 * and stores each message in JetStream must do, and nothing else. A bare `node:http` server reads the
 * body, parses it, serializes each message of its `batch` and publishes them all, with their
 * `messageId` as `Nats-Msg-Id`, through the project's own pipelined publisher, then answers 200 once
 * every PubAck is in. No authentication, validation, normalization, dedupe index, limits or logs.
 *
 * Its rate is what Tributary's could be were all its own work free, so it bounds what
 * `ratio tributary/ceiling` can read on a machine: the ceiling publishes the same messages without the
 * HTTP and the JSON on both sides.
 *
 *   NATS_URL=nats://127.0.0.1:4222 SUBJECT=bench-ceiling.floor node --require ./test/support/swc-register.js test/bench/ingest-floor.server.ts
 *
 * Prints `floor listening on http://127.0.0.1:<port>` once it listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { PipelinedJetStreamPublisher } from '@tributary/event-log/testing';

/** Same as the JetStream adapter's default publish timeout. */
const PUBLISH_TIMEOUT_MS = 2000;

async function main(): Promise<void> {
  const natsUrl = process.env.NATS_URL;
  const subject = process.env.SUBJECT;
  if (!natsUrl || !subject) throw new Error('NATS_URL and SUBJECT are required');
  // As the server's event log connects (no async stack traces per request).
  const connection = await connect({ servers: natsUrl, name: 'tributary-bench-floor', noAsyncTraces: true });
  const publisher = new PipelinedJetStreamPublisher(connection, PUBLISH_TIMEOUT_MS);
  if (publisher.path !== 'frames') throw new Error('the pipelined publisher fell back to message-by-message');

  const answer = (response: ServerResponse, status: number, body: string) => {
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
  };
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let batch: Array<Record<string, unknown>>;
    try {
      batch = (
        JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch: Array<Record<string, unknown>> }
      ).batch;
    } catch {
      answer(response, 400, '{"error":"invalid JSON"}');
      return;
    }
    try {
      await publisher.publishAll(
        batch.map((message) => ({
          subject,
          payload: JSON.stringify(message),
          messageId: String(message.messageId),
        })),
      );
      answer(response, 200, '{"success":true}');
    } catch (error) {
      answer(response, 503, JSON.stringify({ error: String(error) }));
    }
  };
  const server = createServer(
    { keepAliveTimeout: 60_000 },
    (request, response) => void handle(request, response),
  );
  server.listen(0, '127.0.0.1', () => {
    console.log(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  process.once('SIGTERM', () => {
    server.close();
    publisher.close();
    void connection.close().then(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
