// Faults under a tracking load, with Tributary as a child process: killed (SIGKILL), stopped
// (SIGTERM) mid-delivery, and its NATS server stopped and restarted. The invariant checked every time:
// a message answered 200 is in the log afterwards (docs/architecture.md, invariant 1), and while the log is
// unreachable the tracking API answers 503 with Retry-After, never 200 and never anything else.
import { type EventLog } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
// What the server's own watchdog allows a graceful stop (10 s, issue 6).
import { SHUTDOWN_LIMIT_MS } from '@tributary/platform';
import { rmSync } from 'node:fs';
import { spawnTributary, type TributaryProcess } from '../../../test/support/tributary-process';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type ApiEndpoint,
} from '../../../test/support/tracking-e2e.kit';
import {
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  WebhookReceiver,
} from '../../router/test/router-e2e.kit';
import { messageIdsInLog, missingFrom, openLogOf, TrackingLoad } from './fault-load.kit';

const LOAD = { senders: 4, batchSize: 10, pauseMs: 10 };

const natsBinary = NatsServerProcess.findBinary();
type LogKind = 'sqlite' | 'jetstream';
// The JetStream runs need a nats-server binary; without one they cannot run here, so they say so.
const LOG_KINDS: LogKind[] = natsBinary ? ['sqlite', 'jetstream'] : ['sqlite'];
if (!natsBinary) console.warn('nats-server not found: the JetStream fault tests are skipped');
const describeWithNats = natsBinary ? describe : describe.skip;

/** One test's processes, cleaned up whatever happens. */
class Cleanup {
  readonly processes: TributaryProcess[] = [];
  readonly closers: (() => Promise<unknown>)[] = [];

  async run(): Promise<void> {
    for (const child of this.processes) await child.kill('SIGKILL').catch(() => undefined);
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    if (this.processes[0]) rmSync(this.processes[0].dataDir, { recursive: true, force: true });
  }
}

async function readAndClose(eventLog: EventLog, source: Parameters<typeof messageIdsInLog>[1]) {
  try {
    return await messageIdsInLog(eventLog, source);
  } finally {
    await eventLog.close();
  }
}

describe.each(LOG_KINDS)('faults with the %s log', (kind) => {
  let nats: NatsServerProcess | undefined;
  let cleanup: Cleanup;

  beforeAll(async () => {
    if (kind === 'jetstream') nats = await NatsServerProcess.start();
  });
  afterAll(async () => {
    await nats?.dispose();
  });
  beforeEach(() => {
    cleanup = new Cleanup();
  });
  afterEach(async () => {
    await cleanup.run();
  });

  const natsEnvironment = (): Record<string, string> => (nats ? { NATS_URL: nats.url } : {});

  it('SIGKILL during a tracking load: every message answered 200 is in the log', async () => {
    const first = await spawnTributary({ environment: natsEnvironment() });
    cleanup.processes.push(first);
    const source = await createWorkspaceAndSource(first);
    const load = TrackingLoad.start(first, source, LOAD);
    cleanup.closers.push(() => load.stop());

    await load.waitForAcknowledged(300, 20_000);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');
    await load.stop();
    // Requests in flight at the kill got no answer: a client would retry them (dedupe makes it safe).
    expect(Object.keys(load.statusCounts()).filter((status) => status !== 'connection-error')).toEqual([]);

    const stored = await readAndClose(
      await openLogOf({ dataDir: first.dataDir, natsUrl: nats?.url }),
      source,
    );
    expect(missingFrom(stored, load.acknowledged)).toEqual([]);
    expect(load.acknowledged.size).toBeGreaterThanOrEqual(300);
    console.log(
      `[${kind}] SIGKILL: ${load.acknowledged.size} acknowledged, ${stored.size} stored, failures ${JSON.stringify(load.statusCounts())}`,
    );
  }, 60_000);

  it('SIGTERM during ingest and deliveries: exits 0 within 10 s, and after a restart nothing is lost', async () => {
    const environment = { ...POLLING_ENVIRONMENT, ...natsEnvironment(), ROUTER_MAX_IN_FLIGHT: '8' };
    const first = await spawnTributary({ environment });
    cleanup.processes.push(first);
    const endpoint: ApiEndpoint = first;
    const source = await createWorkspaceAndSource(endpoint);
    // A slow receiver keeps deliveries in flight and a backlog behind them when the signal comes.
    const receiver = await WebhookReceiver.start({ secret: 'sigterm', delayMs: 60 });
    cleanup.closers.push(() => receiver.close());
    await createWebhookDestination(endpoint, source, 'webhooks', receiver, 'sigterm');
    const load = TrackingLoad.start(endpoint, source, LOAD);
    cleanup.closers.push(() => load.stop());

    await load.waitForAcknowledged(200, 20_000);
    await pollUntil('deliveries are under way', 20_000, async () =>
      receiver.requests.length >= 10 ? true : undefined,
    );
    const signalledAt = Date.now();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      first.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    first.child.kill('SIGTERM');
    const exit = await exited;
    const shutdownMs = Date.now() - signalledAt;
    await load.stop();
    const deliveredAtStop = new Set(receiver.acceptedIds()).size;

    expect({ exit, output: first.output() }).toEqual({
      exit: { code: 0, signal: null },
      output: expect.any(String),
    });
    expect(shutdownMs).toBeLessThan(SHUTDOWN_LIMIT_MS);
    // Mid-stream: acknowledged messages were still waiting for delivery when the signal came.
    expect(deliveredAtStop).toBeLessThan(load.acknowledged.size);
    // While closing, the server serves what reaches it (the log is still open) or refuses the
    // connection: no 500, and no bare 503 of Fastify's closing.
    const unexpected = load.failures.filter((failure) => failure.status !== 'connection-error');
    expect(unexpected).toEqual([]);
    // Requests in flight when the signal came were answered (200 or 503), not cut. Only requests
    // sent after it fail to connect; the margin covers one sent on a kept-alive connection at the
    // very moment the server closes its idle connections (ECONNRESET, which a client retries).
    expect(load.failures.filter((failure) => failure.sentAt < signalledAt - 5)).toEqual([]);

    const stored = await readAndClose(
      await openLogOf({ dataDir: first.dataDir, natsUrl: nats?.url }),
      source,
    );
    expect(missingFrom(stored, load.acknowledged)).toEqual([]);

    const restarted = await spawnTributary({
      dataDir: first.dataDir,
      port: first.port,
      adminToken: first.adminToken,
      environment,
    });
    cleanup.processes.push(restarted);
    const restartedAt = Date.now();
    await pollUntil(
      'every acknowledged message is delivered after the restart',
      60_000,
      async () => {
        const accepted = new Set(receiver.acceptedIds());
        return missingFrom(accepted, load.acknowledged).length === 0 ? true : undefined;
      },
      200,
    );
    const accepted = receiver.acceptedIds();
    // Deliveries in flight at the signal were finished and acknowledged, not cut and sent again.
    expect(accepted.length - new Set(accepted).size).toBe(0);
    console.log(
      `[${kind}] SIGTERM: exited in ${shutdownMs} ms; ${load.acknowledged.size} acknowledged, ` +
        `${deliveredAtStop} delivered before the stop, all delivered ${Date.now() - restartedAt} ms after the restart, ` +
        `${accepted.length - new Set(accepted).size} duplicates; failures ${JSON.stringify(load.statusCounts())}`,
    );
  }, 120_000);
});

describeWithNats('nats-server stopped during a tracking load', () => {
  let cleanup: Cleanup;
  beforeEach(() => {
    cleanup = new Cleanup();
  });
  afterEach(async () => {
    await cleanup.run();
  });

  it('answers 503 with Retry-After while it is down, never 200 for an unstored message, and 200 again once it is back', async () => {
    const nats = await NatsServerProcess.start();
    cleanup.closers.push(() => nats.dispose());
    const tributary = await spawnTributary({ environment: { NATS_URL: nats.url } });
    cleanup.processes.push(tributary);
    const source = await createWorkspaceAndSource(tributary);
    const load = TrackingLoad.start(tributary, source, LOAD);
    cleanup.closers.push(() => load.stop());

    await load.waitForAcknowledged(100, 20_000);
    await nats.stop();
    const stoppedAt = Date.now();
    const acknowledgedAtStop = load.acknowledged.size;
    await sleep(3000);
    const acknowledgedDuringOutage = load.acknowledged.size - acknowledgedAtStop;
    const outageFailures = load.failures.filter((failure) => failure.at >= stoppedAt);

    await nats.restart();
    const restartedAt = Date.now();
    // Recovery without restarting Tributary: the connection comes back by itself.
    const firstAcknowledgementAt = await load.waitForAcknowledgementAfter(restartedAt, 30_000);
    await load.waitForAcknowledged(load.acknowledged.size + 100, 20_000);
    await load.stop();

    // Nothing can be acknowledged while the server is down (a request in flight at the stop may finish).
    expect(acknowledgedDuringOutage).toBeLessThanOrEqual(LOAD.senders * LOAD.batchSize);
    expect(outageFailures.length).toBeGreaterThan(10);
    const notUnavailable = outageFailures.filter(
      (failure) => failure.status !== 503 || failure.retryAfter === null || !/^\d+$/.test(failure.retryAfter),
    );
    expect(notUnavailable).toEqual([]);
    expect(load.failures.filter((failure) => failure.status === 'connection-error')).toEqual([]);

    const stored = await readAndClose(
      await openLogOf({ dataDir: tributary.dataDir, natsUrl: nats.url }),
      source,
    );
    expect(missingFrom(stored, load.acknowledged)).toEqual([]);
    console.log(
      `NATS outage: ${acknowledgedAtStop} acknowledged before, ${outageFailures.length} answers while down, ` +
        `first 200 ${firstAcknowledgementAt - restartedAt} ms after the restart, ${load.acknowledged.size} acknowledged in all; ` +
        `failures ${JSON.stringify(load.statusCounts())}`,
    );
  }, 90_000);

  it('SIGTERM while nats-server is down and deliveries are waiting: still exits 0 within 10 s, and nothing acknowledged is lost', async () => {
    const nats = await NatsServerProcess.start();
    cleanup.closers.push(() => nats.dispose());
    const environment = { ...POLLING_ENVIRONMENT, NATS_URL: nats.url, ROUTER_MAX_IN_FLIGHT: '8' };
    const first = await spawnTributary({ environment });
    cleanup.processes.push(first);
    const source = await createWorkspaceAndSource(first);
    const receiver = await WebhookReceiver.start({ secret: 'outage', delayMs: 60 });
    cleanup.closers.push(() => receiver.close());
    await createWebhookDestination(first, source, 'webhooks', receiver, 'outage');
    const load = TrackingLoad.start(first, source, LOAD);
    cleanup.closers.push(() => load.stop());
    await load.waitForAcknowledged(200, 20_000);
    await pollUntil('deliveries are under way', 20_000, async () =>
      receiver.requests.length >= 10 ? true : undefined,
    );

    await nats.stop();
    await sleep(500);
    const signalledAt = Date.now();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      first.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    first.child.kill('SIGTERM');
    const exit = await exited;
    const shutdownMs = Date.now() - signalledAt;
    await load.stop();
    expect({ exit, shutdownMs: shutdownMs < SHUTDOWN_LIMIT_MS, output: first.output() }).toEqual({
      exit: { code: 0, signal: null },
      shutdownMs: true,
      output: expect.any(String),
    });

    await nats.restart();
    const restarted = await spawnTributary({
      dataDir: first.dataDir,
      port: first.port,
      adminToken: first.adminToken,
      environment,
    });
    cleanup.processes.push(restarted);
    const restartedAt = Date.now();
    await pollUntil(
      'every acknowledged message is delivered after the restart',
      60_000,
      async () =>
        missingFrom(new Set(receiver.acceptedIds()), load.acknowledged).length === 0 ? true : undefined,
      200,
    );
    console.log(
      `SIGTERM with NATS down: exited in ${shutdownMs} ms; ${load.acknowledged.size} acknowledged, ` +
        `all delivered ${Date.now() - restartedAt} ms after the restart`,
    );
  }, 120_000);
});
