// A standalone router is SIGKILLed while a busy source keeps sending and started again: every message
// reaches the webhook, those still undelivered at the kill within ~10 s of the restart (the ack wait
// is short, since slow deliveries signal progress), and the only duplicates are deliveries that were
// in flight when it died (at most ROUTER_MAX_IN_FLIGHT, each first accepted before the kill).
import {
  createWebhookDestination,
  trackMessage,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { createWorkspaceAndSource, pollUntil, postJson, sleep } from '../support/tracking-e2e.kit';
import { StandaloneTopology } from './standalone-topology.kit';

const MESSAGES = 400;
const BATCH_SIZE = 20;
const MAX_IN_FLIGHT = 8;
/** A slow receiver keeps a backlog, so the kill lands mid-delivery with deliveries in flight. */
const RECEIVER_DELAY_MS = 30;
/** The "~10 s", with room for a loaded machine's slower start. */
const RECOVERY_DEADLINE_MS = 12_000;

describe('a router SIGKILLed under load (JetStream)', () => {
  let topology: StandaloneTopology;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    topology = await StandaloneTopology.start('router-crash', {
      ROUTER_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    });
    receiver = await WebhookReceiver.start({ secret: 'crash', delayMs: RECEIVER_DELAY_MS });
  });

  afterAll(async () => {
    await topology?.dispose('SIGKILL');
    await receiver?.close();
  });

  it('delivers everything, the rest within ~10 s of the restart, duplicates only from the kill', async () => {
    const { endpoint: configEndpoint } = await topology.startConfigApi();
    const source = await createWorkspaceAndSource(configEndpoint);
    await createWebhookDestination(configEndpoint, source, 'webhooks', receiver, 'crash');
    const [router, trackingProcess] = await Promise.all([
      topology.spawn('router'),
      topology.spawn('tracking-api'),
    ]);
    const trackingApi = topology.endpointOf(trackingProcess);

    const sent: string[] = [];
    const sending = (async () => {
      for (let start = 0; start < MESSAGES; start += BATCH_SIZE) {
        const batch = Array.from({ length: BATCH_SIZE }, (_, index) =>
          trackMessage({ event: `Load ${start + index}` }),
        );
        await pollUntil(`batch at ${start} accepted`, 15_000, async () => {
          const response = await postJson(trackingApi, '/v1/batch', { batch }, source.writeKey);
          return response.status === 200 ? true : undefined;
        });
        sent.push(...batch.map((message) => message.messageId as string));
        await sleep(100);
      }
    })();

    await pollUntil('the receiver is part-way through', 30_000, async () =>
      new Set(receiver.acceptedIds()).size >= 80 ? true : undefined,
    );
    await router.kill('SIGKILL');
    const killedAt = Date.now();
    const acceptedAtKill = new Set(receiver.acceptedIds());
    expect(acceptedAtKill.size).toBeLessThan(MESSAGES);

    await topology.spawn('router');
    const restartedAt = Date.now();
    await sending;
    expect(sent).toHaveLength(MESSAGES);

    const { elapsedMs } = await pollUntil(
      'every message is delivered',
      RECOVERY_DEADLINE_MS + 20_000,
      async () => {
        const accepted = new Set(receiver.acceptedIds());
        return sent.every((id) => accepted.has(id)) ? true : undefined;
      },
      100,
    );
    // The messages the dead router held (in flight, unacknowledged) are the last to come back: with a
    // 30 s ack wait they would take 30 s; with the short one and a prompt pull they come within ~10 s.
    const heldByTheDeadRouter = sent.filter((id) => !acceptedAtKill.has(id));
    const lastArrival = Math.max(
      ...receiver
        .accepted()
        .filter((request) => heldByTheDeadRouter.includes(request.messageId))
        .map((request) => request.arrivedAt),
    );
    expect(lastArrival - restartedAt).toBeLessThan(RECOVERY_DEADLINE_MS);

    const accepted = receiver.accepted();
    expect(new Set(accepted.map((request) => request.messageId))).toEqual(new Set(sent));
    expect(accepted.every((request) => request.signatureValid)).toBe(true);
    const copies = new Map<string, number>();
    for (const request of accepted) copies.set(request.messageId, (copies.get(request.messageId) ?? 0) + 1);
    const duplicated = [...copies].filter(([, count]) => count > 1).map(([id]) => id);
    expect(duplicated.length).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    for (const id of duplicated) {
      expect(copies.get(id)).toBe(2);
      // Its first copy arrived before the kill: a delivery the dead router made but could not ack.
      expect(acceptedAtKill.has(id)).toBe(true);
    }
    console.log(
      `killed with ${acceptedAtKill.size} delivered; all ${MESSAGES} delivered ${elapsedMs} ms after the ` +
        `restart began polling; last held message ${lastArrival - restartedAt} ms after the restart, ` +
        `${lastArrival - killedAt} ms after the kill; ${duplicated.length} duplicates`,
    );
  }, 150_000);
});
