// Two router replicas on one JetStream share each destination's durable consumer. A webhook keeps
// failing; the replica that made the first attempts is SIGKILLed mid-window. The other one carries on
// from what the log remembers: the message is dead-lettered one window after its first failure, with
// the attempts of both replicas in its history.
import {
  createWebhookDestination,
  deliveryMetrics,
  destinationName,
  trackMessage,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { createWorkspaceAndSource, pollUntil, postJson, sleep } from '../support/tracking-e2e.kit';
import { configApi } from '../support/config-api.client';
import { StandaloneTopology } from './standalone-topology.kit';

const RETRY_WINDOW_MS = 20_000;
const KILL_AFTER_FIRST_FAILURE_MS = 7_000;
const LATENESS_ALLOWED_MS = 4_000;

describe('retry window across a replica hand-off (JetStream)', () => {
  let topology: StandaloneTopology;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    topology = await StandaloneTopology.start('retry-window', { RETRY_WINDOW: `${RETRY_WINDOW_MS}ms` });
    receiver = await WebhookReceiver.start({ secret: 'hand-off' });
    receiver.answer = () => 500;
  });

  afterAll(async () => {
    await topology?.dispose('SIGKILL');
    await receiver?.close();
  });

  it('dead-letters one window after the first failure when the replica that failed first dies', async () => {
    const { endpoint: configEndpoint } = await topology.startConfigApi();
    const source = await createWorkspaceAndSource(configEndpoint);
    await createWebhookDestination(configEndpoint, source, 'webhooks', receiver, 'hand-off');

    const routers = await Promise.all([topology.spawn('router'), topology.spawn('router')]);
    const trackingApi = topology.endpointOf(await topology.spawn('tracking-api'));

    const message = trackMessage({ event: 'Failing Everywhere' });
    await pollUntil('the batch is accepted', 15_000, async () => {
      const response = await postJson(trackingApi, '/v1/batch', { batch: [message] }, source.writeKey);
      return response.status === 200 ? true : undefined;
    });
    const { value: firstFailureAt } = await pollUntil(
      'the first failed attempt',
      15_000,
      async () => receiver.requests[0]?.arrivedAt,
    );
    // The replica that made the first attempt counts it as a retry in its own metrics.
    const { value: firstAttempter } = await pollUntil('the replica that failed first', 5_000, async () => {
      const retried = await Promise.all(
        routers.map(async (router) => {
          const metrics = await deliveryMetrics(topology.endpointOf(router), source, 'webhooks');
          return metrics.counts.retried;
        }),
      );
      const index = retried.findIndex((count) => count > 0);
      return index >= 0 ? index : undefined;
    });
    const doomed = routers[firstAttempter];
    const survivor = routers[1 - firstAttempter];

    await sleep(KILL_AFTER_FIRST_FAILURE_MS - (Date.now() - firstFailureAt));
    const attemptsBeforeKill = receiver.requests.length;
    expect(attemptsBeforeKill).toBeGreaterThanOrEqual(2);
    await doomed.kill('SIGKILL');
    const killedAt = Date.now();

    const survivorEndpoint = topology.endpointOf(survivor);
    const path = `${destinationName(source, 'webhooks')}/dead-letters`;
    const { value: letter } = await pollUntil(
      'the dead letter',
      RETRY_WINDOW_MS + 30_000,
      async () => {
        const response = await configApi(survivorEndpoint, 'GET', path);
        expect(response.status).toBe(200);
        return response.body.dead_letters[0];
      },
      200,
    );
    const deadLetteredAt = Date.parse(letter.dead_letter_time);
    expect(deadLetteredAt).toBeGreaterThanOrEqual(firstFailureAt + RETRY_WINDOW_MS - 100);
    expect(deadLetteredAt).toBeLessThan(firstFailureAt + RETRY_WINDOW_MS + LATENESS_ALLOWED_MS);

    const requests = receiver.requests.filter((request) => request.messageId === message.messageId);
    expect(letter.attempts).toHaveLength(requests.length);
    const attemptTimes = letter.attempts.map((attempt: { time: string }) => Date.parse(attempt.time));
    attemptTimes.forEach((time: number, index: number) => {
      expect(Math.abs(time - requests[index].arrivedAt)).toBeLessThan(1_000);
    });
    expect(attemptTimes.filter((time: number) => time < killedAt).length).toBe(attemptsBeforeKill);
    expect(attemptTimes.filter((time: number) => time > killedAt).length).toBeGreaterThanOrEqual(1);

    // The survivor made the attempts after the kill and dead-lettered the message.
    const survivorMetrics = await deliveryMetrics(survivorEndpoint, source, 'webhooks');
    expect(survivorMetrics.counts.dead_lettered).toBe(1);
    expect(survivorMetrics.counts.retried).toBeGreaterThanOrEqual(1);
    const settledRequests = receiver.requests.length;
    await sleep(3_000);
    expect(receiver.requests.length).toBe(settledRequests);
  }, 150_000);
});
