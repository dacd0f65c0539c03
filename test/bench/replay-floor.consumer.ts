/**
 * The replay floor's router (`replay-floor.phase.ts`): the least a router must do to deliver stored
 * messages to a webhook, and nothing else. It reads one source's messages from the tracking log from
 * the start, through the project's own event log as the router does (64 in flight, acks coalesced
 * and unconfirmed, as a destination's consumer acks), POSTs each one's stored bytes, signed with
 * `X-Signature`, through undici's `dispatch` as the webhooks adapter sends, and acks it on a 200. No
 * configuration, routing, `integrations`, settlement records, counts, leases or logs.
 *
 * Run as a child process (`replay-floor.phase.ts`), given in the environment: NATS_URL, NAME (of its
 * consumers, deleted once read), SHARED_SECRET, and WARMUP (`<sourceId> <count> <url>`) and TIMED
 * (the same), read in that order. Prints `warmed up` after the first and `done` after the second.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { createEventLog, type EventLog } from '@tributary/event-log';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { statusOf } = require('./undici-status') as {
  statusOf(dispatcher: Agent, request: Record<string, unknown>): Promise<number>;
};

/** The router's default `ROUTER_MAX_IN_FLIGHT`, as the delivery ceiling sends. */
const IN_FLIGHT = 64;

async function deliverAll(
  log: EventLog,
  agent: Agent,
  consumer: string,
  part: string,
  sharedSecret: string,
): Promise<void> {
  const [sourceId, countText, url] = part.split(' ');
  const count = Number(countText);
  const target = new URL(url!);
  let acked = 0;
  let finished!: () => void;
  let failed!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const subscription = await log.consume(
    consumer,
    { sourceId, deliverFrom: new Date(0), ackWaitMs: 30_000, maxInFlight: IN_FLIGHT, confirmAcks: false },
    async (delivery) => {
      const body = delivery.storedPayload;
      const status = await statusOf(agent, {
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.byteLength),
          'x-signature': createHmac('sha1', sharedSecret).update(body).digest('hex'),
        },
        body,
      });
      if (status !== 200) {
        failed(new Error(`HTTP ${status}`));
        return;
      }
      await delivery.ack();
      acked += 1;
      if (acked === count) finished();
    },
  );
  try {
    await done;
  } finally {
    await subscription.stop();
    await log.deleteConsumer(consumer);
  }
}

async function main(): Promise<void> {
  const { NATS_URL, NAME, SHARED_SECRET, WARMUP, TIMED } = process.env;
  if (!NATS_URL || !NAME || !SHARED_SECRET || !WARMUP || !TIMED)
    throw new Error('NATS_URL, NAME, SHARED_SECRET, WARMUP and TIMED are required');
  const dataDir = mkdtempSync(join(tmpdir(), 'tributary-replay-floor-'));
  const log = await createEventLog({ natsUrl: NATS_URL, dataDir, dedupeIndex: false });
  const agent = new Agent();
  try {
    await deliverAll(log, agent, `${NAME}-warmup`, WARMUP, SHARED_SECRET);
    console.log('warmed up');
    await deliverAll(log, agent, NAME, TIMED, SHARED_SECRET);
    console.log('done');
  } finally {
    await agent.close();
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
