// The cluster under a steady load from Segment's analytics-node, while one part after another is
// killed with SIGKILL and started again a few seconds later: the NATS node leading both `TRACKING`
// and the routers' consumer, a router, a tracking API, the Config API. A ledger holds the promises
// of docs/operations.md: every messageId the tracking API acknowledged reaches the webhook (0 lost);
// duplicates stay within the in-flight window of each kill; deliveries resume within 10 s of each
// kill; clients only ever see 200 or the back-pressure 503 they retry.
//
// Not part of `npm test`: it runs alone, bounded, with `npm run test:chaos` (a step of `.ci/run`).
import { Analytics } from '@segment/analytics-node';
import { randomUUID } from 'node:crypto';
import { destinationConsumerName } from '../../apps/router/src/destination-consumers/consumer-names';
import { createWebhookDestination, WebhookReceiver } from '../../apps/router/test/router-e2e.kit';
import { createWorkspaceAndSource, pollUntil, sleep, type TestSource } from '../support/tracking-e2e.kit';
import type { TributaryApp } from '../support/tributary-process';
import { ClusterTopology } from './cluster-topology.kit';

/** Messages per second the load sends: what this shared 2-core machine sustains beside ten processes. */
const RATE = Number(process.env['CHAOS_RATE'] ?? 200);
const TICK_MS = 50;
/** The consumer's `max_ack_pending`: at most this many deliveries are in flight when something dies. */
const MAX_IN_FLIGHT = 64;
/**
 * Duplicates one kill may cost: the deliveries in flight. A NATS node leading the consumer may also
 * take with it acks it had applied but not yet replicated, whose messages the new leader hands out
 * again: up to another window of them.
 */
const duplicateBound = (kill: string) => (kill.startsWith('nats') ? 2 * MAX_IN_FLIGHT : MAX_IN_FLIGHT);
/** How long a killed part stays down before it is started again. */
const DOWN_MS = 3_000;
/** Load after each restart before the next kill, and the window the stall is measured in. */
const SETTLE_MS = 15_000;
/** The promise: deliveries resume within this long of any kill. */
const RESUME_LIMIT_MS = 10_000;
const SECRET = 'chaos';
/**
 * Log lines a failure's explanation leaves out, as they say nothing about it and would bury what
 * does: requests answered 200, and Nest's account of the modules and routes it set up at a start.
 */
const UNTOLD =
  /"status":200,.*"message":"request completed"|"context":"(InstanceLoader|RoutesResolver|RouterExplorer)"/;

interface Kill {
  what: string;
  killedAt: number;
  /** When the next kill came (or the load stopped): the end of this kill's window. */
  windowEnd: number;
  restartMs: number;
}

describe('the cluster under load, with kills (ledger)', () => {
  let topology: ClusterTopology;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start({ secret: SECRET });
    topology = await ClusterTopology.start('chaos', {
      ROUTER_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      // What a broken promise is explained by: a pull lost and found again, a 503 and its reason.
      LOG_LEVEL: 'log',
      ...(process.env['ROUTER_PULL_EXPIRES'] && { ROUTER_PULL_EXPIRES: process.env['ROUTER_PULL_EXPIRES'] }),
    });
    await topology.startApps();
  }, 240_000);

  afterAll(async () => {
    await topology?.dispose();
    await receiver?.close();
  });

  it('loses no acknowledged message, resumes within 10 s of each kill, answers only 200 or 503', async () => {
    const source: TestSource = await createWorkspaceAndSource(topology.configApi, { catalog: 'node' });
    await createWebhookDestination(topology.configApi, source, 'webhooks', receiver, SECRET);
    const consumerName = destinationConsumerName(source.sourceId, 'webhooks');
    await pollUntil('the routers opened the destination consumer', 60_000, () =>
      topology.leaders(consumerName).then(() => true),
    );

    // The load: analytics-node through the balancer, our own messageIds, retries as the library does.
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: topology.trackingUrl,
      path: '/v1/batch',
      flushAt: 20,
      flushInterval: 100,
      maxRetries: 30,
      httpRequestTimeout: 15_000,
    });
    const sentAt = new Map<string, number>();
    const acknowledged = new Set<string>();
    const failed: string[] = [];
    const clientStatuses = new Map<number, number>();
    /** When the client was answered anything but 200. */
    const refusedAt: number[] = [];
    analytics.on('http_response', ({ status }) => {
      clientStatuses.set(status, (clientStatuses.get(status) ?? 0) + 1);
      if (status !== 200) refusedAt.push(Date.now());
    });
    let sequence = 0;
    const load = setInterval(() => {
      for (let index = 0; index < (RATE * TICK_MS) / 1000; index++) {
        const messageId = `chaos-${randomUUID()}`;
        sentAt.set(messageId, Date.now());
        analytics.track(
          {
            userId: `user-${sequence % 50}`,
            event: 'Chaos',
            properties: { sequence: sequence++ },
            messageId,
          },
          (error) => {
            if (error) failed.push(messageId);
            else acknowledged.add(messageId);
          },
        );
      }
    }, TICK_MS);

    const kills: Kill[] = [];
    const killAndRestart = async (what: string, kill: () => Promise<void>, restart: () => Promise<void>) => {
      const killedAt = Date.now();
      await kill();
      await sleep(DOWN_MS);
      const restartStarted = Date.now();
      await restart();
      const entry: Kill = { what, killedAt, windowEnd: 0, restartMs: Date.now() - restartStarted };
      kills.push(entry);
      await sleep(SETTLE_MS);
      entry.windowEnd = Date.now();
    };
    const app = (name: TributaryApp, index = 0) => ({
      kill: async () => void (await topology.kill(name, index)),
      restart: () => topology.restart(name, index),
    });

    try {
      await pollUntil('the load is being delivered', 60_000, async () =>
        receiver.acceptedIds().length > RATE ? true : undefined,
      );
      await sleep(5_000);

      const leader = await topology.alignLeaders(consumerName);
      const natsNode = topology.nats[leader];
      await killAndRestart(
        `nats node ${leader} (leader of TRACKING and ${consumerName})`,
        () => natsNode.kill(),
        () => natsNode.restart(),
      );
      const router = app('router');
      await killAndRestart('router 0', router.kill, router.restart);
      const trackingApi = app('tracking-api');
      await killAndRestart('tracking-api 0', trackingApi.kill, trackingApi.restart);
      const configApi = app('config-api');
      await killAndRestart('config-api', configApi.kill, configApi.restart);
    } finally {
      clearInterval(load);
      await analytics.closeAndFlush({ timeout: 60_000 });
    }

    // Drain: every acknowledged message should arrive; wait for them, bounded.
    await pollUntil('every acknowledged message is delivered', 60_000, async () => {
      const delivered = new Set(receiver.acceptedIds());
      return [...acknowledged].every((id) => delivered.has(id)) ? true : undefined;
    }).catch(() => undefined);

    // The ledger.
    const arrivals = receiver.accepted().filter((request) => sentAt.has(request.messageId));
    const deliveries = new Map<string, number>();
    for (const request of arrivals)
      deliveries.set(request.messageId, (deliveries.get(request.messageId) ?? 0) + 1);
    const lost = [...acknowledged].filter((id) => !deliveries.has(id));
    const duplicates = arrivals.length - deliveries.size;
    const perKill = kills.map((kill) =>
      ledgerOfKill(
        kill,
        arrivals.map((request) => ({ id: request.messageId, at: request.arrivedAt })),
      ),
    );
    const balancerStatuses = Object.fromEntries(topology.balancer!.statuses);
    const lines = [
      `[ledger] load ${RATE} msg/s from analytics-node; pull expiry ${process.env['ROUTER_PULL_EXPIRES'] ?? 'default'}`,
      `[ledger] sent ${sentAt.size}, acknowledged ${acknowledged.size}, failed at the client ${failed.length}, ` +
        `still being retried at the end ${sentAt.size - acknowledged.size - failed.length}, ` +
        `delivered ${deliveries.size}, lost ${lost.length}, duplicates ${duplicates}`,
      `[ledger] answers at the balancer ${JSON.stringify(balancerStatuses)}, seen by the client ${JSON.stringify(Object.fromEntries(clientStatuses))}`,
      ...kills.map(
        (kill, index) =>
          `[ledger] kill ${kill.what}: deliveries stalled ${(perKill[index].stallMs / 1000).toFixed(1)} s, ` +
          `duplicates ${perKill[index].duplicates}, restart took ${(kill.restartMs / 1000).toFixed(1)} s`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    // One list of broken promises, so a failure names every kill that broke one.
    const brokenOfKill = kills.map((kill, index) => [
      ...(perKill[index].stallMs > RESUME_LIMIT_MS
        ? [`${kill.what}: stalled ${perKill[index].stallMs} ms`]
        : []),
      ...(perKill[index].duplicates > duplicateBound(kill.what)
        ? [`${kill.what}: ${perKill[index].duplicates} duplicates`]
        : []),
    ]);
    const broken = brokenOfKill.flat();
    // What the cluster and the apps said while a promise broke, and when clients were refused.
    const diagnosis = kills.flatMap((kill, index) => {
      if (brokenOfKill[index].length === 0) return [];
      const time = (at: number) => new Date(at).toISOString();
      const refused = refusedAt.filter((at) => at >= kill.killedAt && at <= kill.windowEnd);
      return [
        `[ledger] kill ${kill.what} at ${time(kill.killedAt)}, its window to ${time(kill.windowEnd)}: ` +
          `the longest stall began ${time(perKill[index].stallFrom)}; ${refused.length} answers other than 200` +
          (refused.length > 0 ? `, ${time(refused[0])} to ${time(refused.at(-1)!)}` : ''),
        ...topology
          .logLines(kill.killedAt - 10_000, kill.windowEnd)
          .filter((line) => !UNTOLD.test(line))
          .map((line) => `  ${line}`),
      ];
    });
    if (diagnosis.length > 0) process.stdout.write(`${diagnosis.join('\n')}\n`);

    expect(lost).toEqual([]);
    expect(failed).toEqual([]);
    for (const status of Object.keys(balancerStatuses).map(Number)) expect([200, 503]).toContain(status);
    expect(broken).toEqual([]);
    expect(kills).toHaveLength(4);
  }, 600_000);
});

/**
 * A kill's share of the ledger: the longest time in its window without a delivery of a message not
 * delivered before (from the kill to the first one, and between any two) and when it began, and the
 * duplicates whose second delivery fell in its window.
 */
function ledgerOfKill(kill: Kill, arrivals: ReadonlyArray<{ id: string; at: number }>) {
  const seen = new Set<string>();
  let previous = kill.killedAt;
  let stallMs = 0;
  let stallFrom = kill.killedAt;
  let duplicates = 0;
  for (const arrival of arrivals) {
    const first = !seen.has(arrival.id);
    seen.add(arrival.id);
    if (arrival.at < kill.killedAt || arrival.at > kill.windowEnd) continue;
    if (!first) {
      duplicates++;
      continue;
    }
    if (arrival.at - previous > stallMs) {
      stallMs = arrival.at - previous;
      stallFrom = previous;
    }
    previous = arrival.at;
  }
  if (kill.windowEnd - previous > stallMs) {
    stallMs = kill.windowEnd - previous;
    stallFrom = previous;
  }
  return { stallMs, stallFrom, duplicates };
}
