/**
 * BENCH_PHASES=actions: delivery through Segment's Actions Amplitude (the router's adapter in the Actions
 * lane's worker threads, Segment's own destination code, TLS to a loopback fake of api2.amplitude.com)
 * against the webhooks adapter
 * (plain HTTP to a loopback receiver) in the same process and run, each with one message per
 * `deliver` call as the router makes them and BENCH_ACTIONS_CONCURRENCY calls in flight. Reported as
 * messages/s each and `ratio actions/webhook`.
 */
import {
  ActionsLane,
  findActionsDestination,
  WebhooksDeliveryAdapter,
  type DeliveryAdapter,
} from '@tributary/destinations';
import type { NormalizedMessage } from '@tributary/contracts';
import { startFakeVendor } from '../test/support/fake-vendor.kit';

export interface ActionsDeliveryResult {
  messages: number;
  concurrency: number;
  webhookMessagesPerSecond: number;
  actionsMessagesPerSecond: number;
  ratio: number;
}

export async function measureActionsDelivery(
  messages: number,
  concurrency: number,
): Promise<ActionsDeliveryResult> {
  const vendor = await startFakeVendor();
  const lane = new ActionsLane({ egressGuard: vendor.egressGuard, ca: vendor.ca, portMap: vendor.portMap });
  const actions = lane.deliveryAdapter(findActionsDestination('actions-amplitude')!);
  const webhooks = new WebhooksDeliveryAdapter({ egressGuard: vendor.egressGuard });
  const actionsSettings = Object.freeze({
    apiKey: 'bench-key',
    secretKey: 'bench-secret',
    endpoint: 'north_america',
  });
  const webhookSettings = Object.freeze({ url: `http://127.0.0.1:${vendor.portMap[80]}/hook` });
  try {
    // Warm-up: loads the destination, opens connections, lets the JIT settle.
    await run(actions, actionsSettings, Math.min(200, messages), concurrency, 'warm');
    await run(webhooks, webhookSettings, Math.min(200, messages), concurrency, 'warm');
    const webhookMessagesPerSecond = await run(webhooks, webhookSettings, messages, concurrency, 'webhook');
    const actionsMessagesPerSecond = await run(actions, actionsSettings, messages, concurrency, 'actions');
    return {
      messages,
      concurrency,
      webhookMessagesPerSecond: Math.round(webhookMessagesPerSecond),
      actionsMessagesPerSecond: Math.round(actionsMessagesPerSecond),
      ratio: Math.round((actionsMessagesPerSecond / webhookMessagesPerSecond) * 1000) / 1000,
    };
  } finally {
    await lane.close();
    await webhooks.close();
    await vendor.close();
  }
}

async function run(
  adapter: DeliveryAdapter,
  settings: Readonly<Record<string, unknown>>,
  count: number,
  concurrency: number,
  label: string,
): Promise<number> {
  let next = 0;
  let failed = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const [result] = await adapter.deliver({ settings, messages: [message(`${label}-${index}`)] });
      if (result?.outcome !== 'delivered') failed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (failed > 0) throw new Error(`${label}: ${failed} of ${count} deliveries failed`);
  return count / seconds;
}

function message(id: string): NormalizedMessage {
  return {
    type: 'track',
    event: 'Song Played',
    userId: `user-${id.length}`,
    anonymousId: 'anon-bench',
    messageId: id,
    properties: { genre: 'jazz', plays: 3 },
    context: { library: { name: 'analytics-node', version: '3.1.0' }, ip: '203.0.113.9' },
    timestamp: '2026-03-01T12:00:00.000Z',
    receivedAt: '2026-03-01T12:00:01.000Z',
  } as unknown as NormalizedMessage;
}

export function printActionsTable(result: ActionsDeliveryResult): void {
  console.log(
    [
      '',
      `| delivery (${result.messages} messages, ${result.concurrency} in flight) | messages/s |`,
      '|---|---|',
      `| webhooks adapter, HTTP to a loopback receiver | ${result.webhookMessagesPerSecond} |`,
      `| Actions Amplitude, TLS to a loopback fake | ${result.actionsMessagesPerSecond} |`,
      '',
      `ratio actions/webhook: ${result.ratio.toFixed(3)}`,
      '',
    ].join('\n'),
  );
}
