// A message whose delivery kills the router (SIGKILL from the test hook, as an out-of-memory kill
// would) ends as a dead letter with reason `poison` after 3 deliveries that never settled, instead of
// killing every router that takes it forever. Meanwhile the other messages keep flowing, none of them
// is dead-lettered (those in flight at a crash are retried apart, not blamed), the dead letter shows
// in the listing and the delivery metrics; a redrive while the fault is still there gives up on it
// after 3 sends that never settled, and a redrive delivers it once the fault is gone. The
// router runs as a real process that a supervisor starts again after each crash, as a container
// runtime would; on JetStream and on the embedded SQLite log.
import {
  auditEvents,
  createWebhookDestination,
  destinationName,
  trackMessage,
  WebhookReceiver,
  type DeliveryMetricsBody,
} from '../../apps/router/test/router-e2e.kit';
import { configApi } from '../support/config-api.client';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type TestSource,
} from '../support/tracking-e2e.kit';
import type { TributaryProcess } from '../support/tributary-process';
import { StandaloneTopology } from './standalone-topology.kit';

const CRASH_ON_MESSAGE = 'TRIBUTARY_TEST_ROUTER_CRASH_ON_MESSAGE';
const MESSAGES = 200;
const BATCH_SIZE = 10;
/** A slow receiver, so other messages are in flight each time the poison message kills the router. */
const RECEIVER_DELAY_MS = 20;

/** Starts the router again whenever it dies, and counts the deaths by SIGKILL. */
class RouterSupervisor {
  crashes = 0;
  current: TributaryProcess | undefined;
  private stopping = false;
  private readonly running: Promise<void>;

  constructor(
    private readonly topology: StandaloneTopology,
    private readonly settings: Record<string, string>,
  ) {
    this.running = this.supervise();
  }

  /** The running router, once it listens. */
  async router(): Promise<TributaryProcess> {
    const { value } = await pollUntil('a router is running', 60_000, async () =>
      this.current && this.current.child.exitCode === null && this.current.child.signalCode === null
        ? this.current
        : undefined,
    );
    return value;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.kill('SIGTERM');
    await this.running;
  }

  private async supervise(): Promise<void> {
    while (!this.stopping) {
      try {
        const router = await this.topology.spawn('router', this.settings);
        this.current = router;
        await new Promise<void>((resolve) => {
          if (router.child.exitCode !== null || router.child.signalCode !== null) resolve();
          else router.child.once('exit', () => resolve());
        });
        if (router.child.signalCode === 'SIGKILL') this.crashes += 1;
      } catch (error) {
        // Killed while starting: its consumers took the poison message before it listened.
        if (/exited \(SIGKILL\) before listening/.test((error as Error).message)) this.crashes += 1;
        else if (!this.stopping) throw error;
      }
    }
  }
}

describe.each(['jetstream', 'sqlite'] as const)('a poison message (%s)', (eventLog) => {
  let topology: StandaloneTopology;
  let receiver: WebhookReceiver;
  let supervisor: RouterSupervisor | undefined;

  beforeAll(async () => {
    topology = await StandaloneTopology.start(
      `poison-${eventLog}`,
      // Redeliveries after a crash come a second after it.
      { ROUTER_ACK_WAIT: '1s', ROUTER_MAX_IN_FLIGHT: '8' },
      { eventLog },
    );
    receiver = await WebhookReceiver.start({ secret: 'poison', delayMs: RECEIVER_DELAY_MS });
  });

  afterAll(async () => {
    await supervisor?.stop();
    await topology?.dispose('SIGKILL');
    await receiver?.close();
  });

  it('is dead-lettered after 3 deliveries that never settled while the others flow, and can be redriven', async () => {
    const { endpoint: configEndpoint } = await topology.startConfigApi();
    const source = await createWorkspaceAndSource(configEndpoint);
    await createWebhookDestination(configEndpoint, source, 'webhooks', receiver, 'poison');
    const poison = trackMessage({ event: 'Poison' });
    supervisor = new RouterSupervisor(topology, { [CRASH_ON_MESSAGE]: poison.messageId as string });
    const trackingApi = topology.endpointOf(await topology.spawn('tracking-api'));
    await supervisor.router();

    const sent: string[] = [];
    for (let start = 0; start < MESSAGES; start += BATCH_SIZE) {
      const batch = Array.from({ length: BATCH_SIZE }, (_, index) =>
        trackMessage({ event: `Flow ${start + index}` }),
      );
      // The poison message goes amid the others.
      if (start === 3 * BATCH_SIZE) batch.splice(5, 0, poison);
      await pollUntil(`batch at ${start} accepted`, 15_000, async () => {
        const response = await postJson(trackingApi, '/v1/batch', { batch }, source.writeKey);
        return response.status === 200 ? true : undefined;
      });
      sent.push(
        ...batch.map((message) => message.messageId as string).filter((id) => id !== poison.messageId),
      );
      await sleep(100);
    }

    const { value: letters } = await pollUntil(
      'the poison message is dead-lettered',
      150_000,
      async () => {
        const router = await supervisor!.router();
        const listing = await deadLetters(router, topology, source).catch(() => undefined);
        return listing?.some((letter) => letter.message_id === poison.messageId) ? listing : undefined;
      },
      250,
    );
    // Every other message reaches the destination, none is dead-lettered.
    await pollUntil(
      'every other message is delivered',
      60_000,
      async () => {
        const accepted = new Set(receiver.acceptedIds());
        return sent.every((id) => accepted.has(id)) ? true : undefined;
      },
      100,
    );
    expect(receiver.acceptedIds()).not.toContain(poison.messageId);
    expect(supervisor.crashes).toBe(3);
    const router = await supervisor.router();
    const settledLetters = await deadLetters(router, topology, source);
    expect(settledLetters.map((letter) => letter.message_id)).toEqual([poison.messageId]);
    const [letter] = letters.filter((each) => each.message_id === poison.messageId);
    expect(letter.reason).toBe(
      'poison: 3 deliveries never settled (the process delivering it stopped or stalled each time)',
    );
    // The first delivery records no start (it is every message's way); the two after it did.
    expect(letter.attempts).toEqual([
      { time: expect.any(String), outcome: expect.stringMatching(/^never settled/) },
      { time: expect.any(String), outcome: expect.stringMatching(/^never settled/) },
    ]);
    expect(letter.message).toMatchObject({ messageId: poison.messageId, event: 'Poison' });

    // The router that dead-lettered it counts it, by cause, in its metrics and for Prometheus.
    const metrics = await configApi(
      topology.endpointOf(router),
      'GET',
      `${destinationName(source, 'webhooks')}/metrics`,
    );
    expect(metrics.status).toBe(200);
    const body = metrics.body as DeliveryMetricsBody & { dead_letters_by_cause: Record<string, number> };
    expect(body.counts.dead_lettered).toBe(1);
    expect(body.dead_letters_by_cause).toEqual({ retries_exhausted: 0, poison: 1 });
    const scrape = await (await fetch(router.metricsUrl)).text();
    expect(scrape).toMatch(
      new RegExp(`tributary_destination_dead_lettered_total\\{[^}]*cause="poison"[^}]*\\} 1\\b`),
    );

    // A redrive while the fault is still there: its send kills the router holding the redrive's
    // lease, and the replica taking the lease over after each crash counts on; after 3 sends that
    // never settled the letter stays, recorded as failed with the poison reason.
    const deadLetterSequence = Number(letter.name.split('/').pop());
    const stillPoison = await configApi(
      topology.endpointOf(router),
      'POST',
      `${destinationName(source, 'webhooks')}/dead-letters:redrive`,
      {},
    );
    expect(stillPoison.status).toBe(200);
    const { value: redriven } = await pollUntil(
      'the redrive of the poison letter is recorded',
      150_000,
      async () =>
        (
          await auditEvents(configEndpoint, source, `${destinationName(source, 'webhooks')}/dead-letters`)
        ).find(
          (entry) =>
            entry.type === 'DestinationDeadLettersRedriven' &&
            entry.data.redriveId === stillPoison.body.redrive_id,
        ),
      500,
    );
    expect(redriven.data).toMatchObject({
      delivered: [],
      failed: [{ deadLetterSequence, reason: expect.stringMatching(/^poison: 3 deliveries never settled/) }],
    });
    expect(supervisor.crashes).toBe(6);
    expect(receiver.acceptedIds()).not.toContain(poison.messageId);
    const afterRedrive = await deadLetters(await supervisor.router(), topology, source);
    expect(afterRedrive.map((each) => each.message_id)).toEqual([poison.messageId]);

    // The fault is gone (a fixed release): a redrive delivers it and it leaves the list.
    await supervisor.stop();
    supervisor = new RouterSupervisor(topology, {});
    const fixed = await supervisor.router();
    const redrive = await configApi(
      topology.endpointOf(fixed),
      'POST',
      `${destinationName(source, 'webhooks')}/dead-letters:redrive`,
      {},
    );
    expect(redrive.status).toBe(200);
    await pollUntil('the redrive delivers the poison message', 30_000, async () =>
      receiver.acceptedIds().includes(poison.messageId) ? true : undefined,
    );
    await pollUntil('the dead letter leaves the list', 30_000, async () =>
      (await deadLetters(fixed, topology, source)).length === 0 ? true : undefined,
    );
    expect(supervisor.crashes).toBe(0);
  }, 480_000);
});

interface DeadLetterBody {
  name: string;
  message_id: string;
  reason: string;
  attempts: { time: string; outcome: string }[];
  message: Record<string, unknown>;
}

/** The dead letters of the destination, as the router's Config API routes list them. */
async function deadLetters(
  router: TributaryProcess,
  topology: StandaloneTopology,
  source: TestSource,
): Promise<DeadLetterBody[]> {
  const response = await configApi(
    topology.endpointOf(router),
    'GET',
    `${destinationName(source, 'webhooks')}/dead-letters`,
  );
  if (response.status !== 200) throw new Error(`listing dead letters: ${response.status} ${response.text}`);
  return response.body.dead_letters as DeadLetterBody[];
}
