/**
 * What an Actions destination may read of a response, and what a tenant may see of it: a loopback
 * server plays a tenant-chosen URL (Optimizely's `dataFileUrl`, Voiceops' `baseUrl`) answering a
 * decompression bomb or an internal service's secret.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { NormalizedMessage } from '@tributary/contracts';
import { findActionsDestination } from './actions-catalog.entries';
import { EgressGuard } from '../delivery/egress/egress-guard';
import { parseEgressPolicy } from '../delivery/egress/egress-policy';
import { ActionsAuthenticationTester } from './actions-authentication.tester';
import { SegmentActionsDeliveryAdapter, SegmentActionsRuntime } from './segment-actions.adapter';

jest.setTimeout(60_000);

const optimizely = findActionsDestination('actions-optimizely-feature-experimentation-cloud')!;
const SECRET = 'INTERNAL-ONLY: db_password=hunter2';
/** 64 MiB of zeros in about 64 KB on the wire. */
const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));

const track = (id: string): NormalizedMessage =>
  ({
    type: 'track',
    event: 'Order Completed',
    userId: 'user-1',
    messageId: id,
    properties: {},
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
  }) as unknown as NormalizedMessage;

const optimizelySettings = (dataFileUrl: string) =>
  Object.freeze({
    accountId: '1',
    dataFileUrl,
    subscriptions: [{ subscribe: 'type = "track"', partnerAction: 'trackEvent', mapping: {} }],
  });

describe('Actions responses: size cap and internal answers', () => {
  let server: Server;
  let port: number;
  /** `open`, as the default deployment: loopback is reachable, its answers are not shown. */
  let runtime: SegmentActionsRuntime;
  let adapter: SegmentActionsDeliveryAdapter;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/bomb') {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        response.end(bomb);
      } else if (request.url?.startsWith('/frontline-api/')) {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: SECRET }));
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(SECRET);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    runtime = new SegmentActionsRuntime({ egressGuard: new EgressGuard(parseEgressPolicy('open', '')) });
    adapter = new SegmentActionsDeliveryAdapter(optimizely, runtime);
  });
  afterAll(async () => {
    runtime.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a delivery reads at most 1 MiB of a response after decompression, and discards with the reason', async () => {
    const before = process.memoryUsage();
    const [result] = await adapter.deliver({
      settings: optimizelySettings(`http://127.0.0.1:${port}/bomb`),
      messages: [track('m-bomb')],
    });
    const after = process.memoryUsage();
    expect(result).toMatchObject({
      messageId: 'm-bomb',
      outcome: 'discard',
      reason: expect.stringContaining('larger than the 1048576 bytes'),
    });
    expect(after.arrayBuffers + after.heapUsed - (before.arrayBuffers + before.heapUsed)).toBeLessThan(
      20 * 1024 * 1024,
    );
  });

  it(':test reads at most 1 MiB of a response too', async () => {
    const tester = new ActionsAuthenticationTester({
      egressGuard: new EgressGuard(parseEgressPolicy('open', '')),
    });
    try {
      const result = await tester.test(optimizely.slug, {
        accountId: '1',
        dataFileUrl: `http://127.0.0.1:${port}/bomb`,
      });
      expect(result).toMatchObject({
        status: 'FAILED',
        message: 'the response is larger than the 1048576 bytes an action may read',
      });
    } finally {
      tester.close();
    }
  });

  it("keeps an internal address's answer out of the reason under the open mode", async () => {
    const [result] = await adapter.deliver({
      settings: optimizelySettings(`http://127.0.0.1:${port}/internal`),
      messages: [track('m-internal')],
    });
    expect(result).toMatchObject({
      outcome: 'discard',
      status: 400,
      reason: 'IntegrationError 400: the answer of an internal address is not shown',
    });
    expect(JSON.stringify(result)).not.toContain('hunter2');
  });

  it("keeps an internal address's answer out of :test under the open mode (Voiceops quotes the body's message)", async () => {
    const tester = new ActionsAuthenticationTester({
      egressGuard: new EgressGuard(parseEgressPolicy('open', '')),
    });
    try {
      const result = await tester.test('actions-voiceops', {
        accessToken: 'token',
        baseUrl: `http://127.0.0.1:${port}`,
      });
      expect(result).toEqual({
        status: 'FAILED',
        message: 'Credentials are invalid (the answer of an internal address is not shown)',
      });
    } finally {
      tester.close();
    }
  });

  it('still shows the answer of a host the allow-list names', async () => {
    const allowed = new SegmentActionsRuntime({
      egressGuard: new EgressGuard(parseEgressPolicy('public', 'datafile.example'), async () => [
        { address: '127.0.0.1', family: 4 },
      ]),
      portMap: { 80: port },
    });
    try {
      const [result] = await new SegmentActionsDeliveryAdapter(optimizely, allowed).deliver({
        settings: optimizelySettings('http://datafile.example/internal'),
        messages: [track('m-allowed')],
      });
      expect(result).toMatchObject({ outcome: 'discard', reason: `IntegrationError 400: ${SECRET}` });
    } finally {
      allowed.close();
    }
  });
});
