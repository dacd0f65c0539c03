// Nothing acknowledged is lost when the server is killed mid-delivery (SIGKILL: no shutdown hook runs)
// and started again on the same data: every message the tracking API answered 200 for reaches the
// webhook at least once. Duplicates across the crash are allowed (at-least-once delivery).
import { rmSync } from 'node:fs';
import { spawnTributary, type TributaryProcess } from '../../../test/support/tributary-process';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import {
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  trackMessage,
  WebhookReceiver,
} from './router-e2e.kit';

const MESSAGES = 300;
const BATCH_SIZE = 20;
/** A slow receiver and a small in-flight budget keep a backlog, so the kill lands mid-delivery. */
const RECEIVER_DELAY_MS = 40;
const ENVIRONMENT = { ...POLLING_ENVIRONMENT, ROUTER_MAX_IN_FLIGHT: '4' };
/** After a crash, deliveries the dead process held come back once their ack wait (ROUTER_ACK_WAIT, 5 s) is over. */
const REDELIVERY_DEADLINE_MS = 30_000;

describe('SIGKILL mid-stream and restart', () => {
  const processes: TributaryProcess[] = [];
  let receiver: WebhookReceiver;

  afterAll(async () => {
    for (const child of processes) await child.kill('SIGKILL');
    await receiver?.close();
    if (processes[0]) rmSync(processes[0].dataDir, { recursive: true, force: true });
  });

  it('delivers every acknowledged message at least once', async () => {
    const first = await spawnTributary({ environment: ENVIRONMENT });
    processes.push(first);
    // The address stays the same across the restart, so the sender below only has to retry.
    const endpoint = { baseUrl: first.baseUrl, adminToken: first.adminToken };
    const source: TestSource = await createWorkspaceAndSource(endpoint);
    receiver = await WebhookReceiver.start({ secret: 'crash', delayMs: RECEIVER_DELAY_MS });
    await createWebhookDestination(endpoint, source, 'webhooks', receiver, 'crash');

    // The sender behaves like a client library: a batch not answered 200 is sent again (dedupe makes
    // that safe) until it is acknowledged.
    const acknowledged = new Set<string>();
    let failedRequests = 0;
    const sending = (async () => {
      for (let start = 0; start < MESSAGES; start += BATCH_SIZE) {
        const batch = Array.from({ length: BATCH_SIZE }, (_, index) =>
          trackMessage({ event: `Crash ${start + index}` }),
        );
        for (const deadline = Date.now() + 30_000; ;) {
          const response = await postJson(endpoint, '/v1/batch', { batch }, source.writeKey).catch(
            () => undefined,
          );
          if (response?.status === 200) break;
          failedRequests += 1;
          if (Date.now() > deadline)
            throw new Error(`a batch was not acknowledged within 30 s: ${response?.status}`);
          await sleep(100);
        }
        for (const message of batch) acknowledged.add(message.messageId);
        await sleep(150);
      }
    })();

    await pollUntil('the receiver is part-way through', 20_000, async () =>
      new Set(receiver.acceptedIds()).size >= 60 ? true : undefined,
    );
    const acceptedAtKill = new Set(receiver.acceptedIds()).size;
    const acknowledgedAtKill = acknowledged.size;
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');
    // Mid-stream: messages were acknowledged to the client but not yet delivered when it died, and
    // the client had more to send.
    expect(acknowledgedAtKill).toBeGreaterThan(acceptedAtKill);
    expect(acknowledgedAtKill).toBeLessThan(MESSAGES);

    const restarted = await spawnTributary({
      dataDir: first.dataDir,
      port: first.port,
      adminToken: first.adminToken,
      environment: ENVIRONMENT,
    });
    processes.push(restarted);
    const restartedAfterMs = Date.now();
    await sending;
    expect(acknowledged.size).toBe(MESSAGES);

    const { elapsedMs } = await pollUntil(
      'every acknowledged message arrives',
      REDELIVERY_DEADLINE_MS,
      async () => {
        const accepted = new Set(receiver.acceptedIds());
        return [...acknowledged].every((id) => accepted.has(id)) ? true : undefined;
      },
      200,
    );
    const accepted = receiver.acceptedIds();
    const distinct = new Set(accepted);
    expect([...distinct].sort()).toEqual([...acknowledged].sort());
    for (const request of receiver.requests) expect(request.signatureValid).toBe(true);
    console.log(
      `killed with ${acknowledgedAtKill} acknowledged and ${acceptedAtKill} delivered; ${failedRequests} send attempts ` +
        `failed meanwhile; all ${MESSAGES} delivered ${Date.now() - restartedAfterMs} ms after the restart ` +
        `(waited ${elapsedMs} ms), ${accepted.length - distinct.size} duplicates`,
    );

    // The restarted server keeps serving the Config API with the same token and data.
    const metrics = await fetch(
      `${restarted.baseUrl}/v1beta/workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations/webhooks/metrics`,
      { headers: { authorization: `Bearer ${restarted.adminToken}` } },
    );
    expect(metrics.status).toBe(200);
  }, 120_000);
});
