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
import { Agent } from 'undici';
import type { EventLog } from '@tributary/event-log';
import { readAll, requiredEnvironment, withFloorLog } from './floor-reads';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { statusOf } = require('./undici-status') as {
  statusOf(dispatcher: Agent, request: Record<string, unknown>): Promise<number>;
};

/** The router's default `ROUTER_MAX_IN_FLIGHT`, as the delivery ceiling sends. */
const IN_FLIGHT = 64;

/** The part's messages (`<sourceId> <count> <url>`), each posted, signed; resolves once all are acked. */
async function deliverAll(
  log: EventLog,
  agent: Agent,
  consumer: string,
  part: string,
  sharedSecret: string,
): Promise<void> {
  const [sourceId, countText, url] = part.split(' ');
  const target = new URL(url!);
  const options = {
    sourceId: sourceId!,
    from: new Date(0),
    messages: Number(countText),
    inFlight: IN_FLIGHT,
  };
  await readAll(log, consumer, options, async (delivery) => {
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
    if (status !== 200) throw new Error(`HTTP ${status}`);
  });
}

async function main(): Promise<void> {
  const { NATS_URL, NAME, SHARED_SECRET, WARMUP, TIMED } = requiredEnvironment([
    'NATS_URL',
    'NAME',
    'SHARED_SECRET',
    'WARMUP',
    'TIMED',
  ]);
  const agent = new Agent();
  try {
    await withFloorLog(NATS_URL, async (log) => {
      await deliverAll(log, agent, `${NAME}-warmup`, WARMUP, SHARED_SECRET);
      console.log('warmed up');
      await deliverAll(log, agent, NAME, TIMED, SHARED_SECRET);
      console.log('done');
    });
  } finally {
    await agent.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
