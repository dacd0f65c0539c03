// The retry window and the attempt history belong to the log, not to a process: a webhook that keeps
// failing is dead-lettered one window after its first failed attempt even when the router that made
// the first attempts is SIGKILLed mid-window (no shutdown hook runs) and started again, and the dead
// letter lists the attempts of both processes. The embedded default (SQLite event log) here; the
// JetStream counterpart, with two replicas, is test/topology/router-replica-retry-window.e2e-spec.ts.
import { rmSync } from 'node:fs';
import { spawnTributary, type TributaryProcess } from '../../../test/support/tributary-process';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type ApiEndpoint,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createWebhookDestination,
  destinationName,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  WebhookReceiver,
} from './router-e2e.kit';

const RETRY_WINDOW_MS = 20_000;
/** Killed this long after the first failure: well inside the window. */
const KILL_AFTER_FIRST_FAILURE_MS = 7_000;
/** A loaded machine delays the last attempt a little; a window counted from the restart is far later. */
const LATENESS_ALLOWED_MS = 4_000;
const ENVIRONMENT = { ...POLLING_ENVIRONMENT, RETRY_WINDOW: `${RETRY_WINDOW_MS}ms` };

describe('retry window across a SIGKILL and restart (embedded log)', () => {
  const processes: TributaryProcess[] = [];
  let receiver: WebhookReceiver;

  afterAll(async () => {
    for (const child of processes) await child.kill('SIGKILL');
    await receiver?.close();
    if (processes[0]) rmSync(processes[0].dataDir, { recursive: true, force: true });
  });

  it('dead-letters one window after the first failure, with the attempts of both processes', async () => {
    const first = await spawnTributary({ environment: ENVIRONMENT });
    processes.push(first);
    const endpoint: ApiEndpoint = { baseUrl: first.baseUrl, adminToken: first.adminToken };
    const source: TestSource = await createWorkspaceAndSource(endpoint);
    receiver = await WebhookReceiver.start({ secret: 'window' });
    receiver.answer = () => 503;
    await createWebhookDestination(endpoint, source, 'webhooks', receiver, 'window');

    const message = trackMessage({ event: 'Always Failing' });
    await sendBatch(endpoint, source, [message]);
    const { value: firstFailureAt } = await pollUntil(
      'the first failed attempt',
      15_000,
      async () => receiver.requests[0]?.arrivedAt,
    );
    await sleep(KILL_AFTER_FIRST_FAILURE_MS - (Date.now() - firstFailureAt));
    const attemptsBeforeKill = receiver.requests.length;
    expect(attemptsBeforeKill).toBeGreaterThanOrEqual(2);
    await first.kill('SIGKILL');
    const killedAt = Date.now();

    const restarted = await spawnTributary({
      dataDir: first.dataDir,
      port: first.port,
      adminToken: first.adminToken,
      environment: ENVIRONMENT,
    });
    processes.push(restarted);
    const restartedAt = Date.now();

    const path = `${destinationName(source, 'webhooks')}/dead-letters`;
    const { value: letter } = await pollUntil(
      'the dead letter',
      RETRY_WINDOW_MS + 30_000,
      async () => {
        const response = await configApi(endpoint, 'GET', path);
        expect(response.status).toBe(200);
        return response.body.dead_letters[0];
      },
      200,
    );
    const deadLetteredAt = Date.parse(letter.dead_letter_time);
    // One window after the first failure, not one window after the restart.
    expect(deadLetteredAt).toBeGreaterThanOrEqual(firstFailureAt + RETRY_WINDOW_MS - 100);
    expect(deadLetteredAt).toBeLessThan(firstFailureAt + RETRY_WINDOW_MS + LATENESS_ALLOWED_MS);
    expect(deadLetteredAt).toBeLessThan(restartedAt + RETRY_WINDOW_MS - 2_000);

    // Every attempt, from both processes: the receiver's requests are the attempts (none was in flight
    // at the kill, since the receiver answers at once), in the same order and at the same times.
    const requests = receiver.requests.filter((request) => request.messageId === message.messageId);
    expect(letter.attempts).toHaveLength(requests.length);
    const attemptTimes = letter.attempts.map((attempt: { time: string }) => Date.parse(attempt.time));
    attemptTimes.forEach((time: number, index: number) => {
      expect(Math.abs(time - requests[index].arrivedAt)).toBeLessThan(1_000);
    });
    expect(attemptTimes.filter((time: number) => time < killedAt).length).toBe(attemptsBeforeKill);
    expect(attemptTimes.filter((time: number) => time > restartedAt).length).toBeGreaterThanOrEqual(1);
    for (const attempt of letter.attempts) expect(attempt.outcome).toMatch(/503/);
    expect(letter.reason).toMatch(new RegExp(`^retries exhausted after ${requests.length} attempts: .*503`));

    // Settled: no further attempt, and nothing left to retry.
    const settledRequests = receiver.requests.length;
    await sleep(3_000);
    expect(receiver.requests.length).toBe(settledRequests);
  }, 120_000);
});
