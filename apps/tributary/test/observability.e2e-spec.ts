// GET /metrics (on its own listener) and the JSON log lines of the all-in-one server, over loopback HTTP.
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWebhookDestination,
  destinationName,
  POLLING_ENVIRONMENT,
  waitForSettled,
  WebhookReceiver,
} from '../../router/test/router-e2e.kit';
import {
  basicAuth,
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  postTracking,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition, the sample lines only (`name{a="b",...} value`). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/\b([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found.length === 0 ? undefined : found.reduce((sum, sample) => sum + sample.value, 0);
}

async function scrape(t: TributaryTestInstance): Promise<{ contentType: string | null; samples: Sample[] }> {
  const response = await fetch(t.metricsUrl);
  expect(response.status).toBe(200);
  return {
    contentType: response.headers.get('content-type'),
    samples: parseExposition(await response.text()),
  };
}

const track = (event = 'Clicked', messageId: string = randomUUID()) => ({
  type: 'track',
  userId: 'u-1',
  event,
  messageId,
});

describe('GET /metrics', () => {
  let t: TributaryTestInstance;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // A short retry window, so the failing destination's message is dead-lettered within seconds.
    t = await startTributary({ environment: { ...POLLING_ENVIRONMENT, RETRY_WINDOW: '1s' } });
    receiver = await WebhookReceiver.start({ secret: 'metrics-test-secret' });
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.stop({ removeData: true });
  });

  it('counts tracking outcomes, HTTP requests by route pattern, publish latency, deliveries, lag and dead letters', async () => {
    const source = await createWorkspaceAndSource(t);
    await createWebhookDestination(t, source, 'webhooks', receiver, 'metrics-test-secret');
    const duplicateId = randomUUID();
    expect((await postJson(t, '/v1/track', track('A', duplicateId), source.writeKey)).status).toBe(200);
    expect((await postJson(t, '/v1/track', track('A', duplicateId), source.writeKey)).status).toBe(200);
    const batch = await postJson(
      t,
      '/v1/batch',
      { batch: [track('B'), track('C'), { type: 'track', userId: 'u-1' }] },
      source.writeKey,
    );
    expect(batch.status).toBe(200);
    expect((await postJson(t, '/v1/track', track(), 'not-a-write-key')).status).toBe(401);
    await waitForSettled(t, source, 'webhooks', 3);
    expect((await configApi(t, 'GET', `workspaces/${source.workspaceSlug}`)).status).toBe(200);
    expect((await configApi(t, 'GET', 'workspaces/no-such-workspace')).status).toBe(404);

    const { contentType, samples } = await scrape(t);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

    const tracking = (outcome: string) => valueOf(samples, 'tributary_tracking_messages_total', { outcome });
    expect(tracking('accepted')).toBe(3);
    expect(tracking('duplicate')).toBe(1);
    expect(tracking('rejected')).toBe(1);
    expect(tracking('refused_write_key')).toBe(1);
    expect(tracking('unavailable')).toBe(0);

    // Route patterns, never raw URLs: the workspace slug must not appear as a label.
    const routes = new Set(
      samples.filter((sample) => sample.name === 'tributary_http_requests_total').map((s) => s.labels.route),
    );
    // The tracking controller serves every `/v1/<type>` route from one pattern.
    expect(routes).toContain('/v1/:route');
    expect([...routes].some((route) => route.includes(source.workspaceSlug))).toBe(false);
    const trackRequests = (status_class: string) =>
      valueOf(samples, 'tributary_http_requests_total', {
        method: 'POST',
        route: '/v1/:route',
        status_class,
      });
    expect(trackRequests('2xx')).toBe(3);
    expect(trackRequests('4xx')).toBe(1);
    const workspaceRoute = [...routes].find((route) => /^\/v1beta\/workspaces\/:[^/]+$/.test(route));
    expect(workspaceRoute).toBeDefined();
    expect(
      valueOf(samples, 'tributary_http_requests_total', {
        method: 'GET',
        route: workspaceRoute!,
        status_class: '2xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      valueOf(samples, 'tributary_http_requests_total', {
        method: 'GET',
        route: workspaceRoute!,
        status_class: '4xx',
      }),
    ).toBe(1);
    const trackLatencyCount = valueOf(samples, 'tributary_http_request_duration_seconds_count', {
      route: '/v1/:route',
    });
    expect(trackLatencyCount).toBe(4);
    const trackLatencySum = valueOf(samples, 'tributary_http_request_duration_seconds_sum', {
      route: '/v1/:route',
    })!;
    expect(trackLatencySum).toBeGreaterThan(0);
    expect(trackLatencySum).toBeLessThan(10);

    // One publish per request that had messages to store: both /v1/track and the batch.
    expect(valueOf(samples, 'tributary_event_log_publish_duration_seconds_count')).toBe(3);
    expect(valueOf(samples, 'tributary_event_log_publish_duration_seconds_bucket', { le: '+Inf' })).toBe(3);

    const destination = { source_id: source.sourceId, destination: 'webhooks' };
    expect(valueOf(samples, 'tributary_deliveries_total', { ...destination, outcome: 'delivered' })).toBe(3);
    expect(valueOf(samples, 'tributary_deliveries_total', { ...destination, outcome: 'dead_lettered' })).toBe(
      0,
    );
    expect(
      valueOf(samples, 'tributary_destination_consumer_lag_messages', {
        ...destination,
        state: 'undelivered',
      }),
    ).toBe(0);
    expect(valueOf(samples, 'tributary_destination_dead_letters', destination)).toBe(0);

    // Workspace, source and destination creation at least; the timestamp is of this test run.
    expect(valueOf(samples, 'tributary_config_projection_events_applied_total')).toBeGreaterThanOrEqual(3);
    const lastApplied = valueOf(samples, 'tributary_config_projection_last_applied_timestamp_seconds')!;
    expect(Math.abs(lastApplied - Date.now() / 1000)).toBeLessThan(120);
    expect(valueOf(samples, 'tributary_config_projection_position')).toBeGreaterThanOrEqual(0);
  });

  it('shows a failing destination: its message unacknowledged while retried, then one dead letter', async () => {
    const source = await createWorkspaceAndSource(t);
    const failing = await WebhookReceiver.start();
    try {
      failing.answer = () => 500;
      await createWebhookDestination(t, source, 'webhooks', failing, 'unused-secret');
      expect((await postJson(t, '/v1/track', track('Failing'), source.writeKey)).status).toBe(200);
      const destination = { source_id: source.sourceId, destination: 'webhooks' };

      const { value: whileRetried } = await pollUntil('a retry is counted', 5_000, async () => {
        const { samples } = await scrape(t);
        const retried = valueOf(samples, 'tributary_deliveries_total', {
          ...destination,
          outcome: 'retried',
        });
        return retried && retried >= 1 ? samples : undefined;
      });
      const lag = (samples: Sample[], state: string) =>
        valueOf(samples, 'tributary_destination_consumer_lag_messages', { ...destination, state });
      // Nak-delayed for its retry: given to the consumer, not settled.
      expect(lag(whileRetried, 'undelivered')).toBe(0);
      expect(lag(whileRetried, 'unacknowledged')).toBe(1);
      expect(valueOf(whileRetried, 'tributary_destination_dead_letters', destination)).toBe(0);

      // The dead letter is stored first, then the message is settled: a scrape may fall between the two.
      const { value: afterDeadLetter } = await pollUntil('the message is dead-lettered', 10_000, async () => {
        const { samples } = await scrape(t);
        return valueOf(samples, 'tributary_destination_dead_letters', destination) === 1 &&
          lag(samples, 'unacknowledged') === 0
          ? samples
          : undefined;
      });
      expect(
        valueOf(afterDeadLetter, 'tributary_deliveries_total', { ...destination, outcome: 'dead_lettered' }),
      ).toBe(1);
      expect(
        valueOf(afterDeadLetter, 'tributary_deliveries_total', { ...destination, outcome: 'delivered' }),
      ).toBe(0);
      expect(lag(afterDeadLetter, 'unacknowledged')).toBe(0);
    } finally {
      await failing.close();
    }
  });

  it('keeps the series of each instance apart: a second server in this process starts from zero', async () => {
    const other = await startTributary();
    try {
      const { samples } = await scrape(other);
      expect(valueOf(samples, 'tributary_tracking_messages_total', { outcome: 'accepted' })).toBe(0);
      expect(valueOf(samples, 'tributary_http_requests_total', { route: '/v1/:route' })).toBeUndefined();
    } finally {
      await other.stop({ removeData: true });
    }
    const { samples } = await scrape(t);
    expect(
      valueOf(samples, 'tributary_tracking_messages_total', { outcome: 'accepted' }),
    ).toBeGreaterThanOrEqual(3);
  });
});

describe('JSON logs', () => {
  it('writes one JSON line per request with its id and route, and never a write key or destination secret', async () => {
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const t = await startTributary({ environment: { LOG_LEVEL: 'log' }, logDestination: output });
    const destinationSecret = `whsec-${randomUUID()}`;
    const receiver = await WebhookReceiver.start({ secret: destinationSecret });
    try {
      const source = await createWorkspaceAndSource(t);
      await createWebhookDestination(t, source, 'webhooks', receiver, destinationSecret);
      const requestId = `log-test-${randomUUID()}`;
      const tracked = await postTracking(t, '/v1/track', JSON.stringify(track()), {
        'content-type': 'application/json',
        authorization: basicAuth(source.writeKey),
        'x-request-id': requestId,
      });
      expect(tracked.status).toBe(200);
      // An unknown write key is the kind of failure that tempts code to log the credential.
      const refused = await postTracking(t, '/v1/track', JSON.stringify(track()), {
        'content-type': 'application/json',
        authorization: basicAuth(`${source.writeKey}-wrong`),
      });
      expect(refused.status).toBe(401);
      const read = await configApi(t, 'GET', destinationName(source, 'webhooks'));
      expect(read.status).toBe(200);
      await waitForSettled(t, source, 'webhooks', 1);
      await fetch(`${t.baseUrl}/health/live`);
      await fetch(t.metricsUrl);
      await new Promise((resolve) => setTimeout(resolve, 100));

      const lines = text.split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(3);
      const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
      for (const entry of entries) {
        expect(typeof entry.time).toBe('string');
        expect(Number.isNaN(Date.parse(entry.time))).toBe(false);
        expect(typeof entry.level).toBe('string');
        expect(typeof entry.message).toBe('string');
      }
      const requestLines = entries.filter((entry) => entry.context === 'HTTP');
      const trackLine = requestLines.find((entry) => entry.requestId === requestId);
      expect(trackLine).toMatchObject({
        level: 'info',
        method: 'POST',
        route: '/v1/:route',
        status: 200,
      });
      expect(typeof trackLine!.durationMs).toBe('number');
      expect(requestLines.some((entry) => entry.status === 401 && entry.route === '/v1/:route')).toBe(true);
      expect(requestLines.every((entry) => typeof entry.requestId === 'string')).toBe(true);
      expect(requestLines.some((entry) => /^\/(health|metrics)/.test(String(entry.route)))).toBe(false);

      const encodedWriteKey = basicAuth(source.writeKey).slice('Basic '.length);
      for (const secret of [source.writeKey, encodedWriteKey, destinationSecret, t.adminToken, 'enc:v1:']) {
        expect(text).not.toContain(secret);
      }
    } finally {
      await receiver.close();
      await t.stop({ removeData: true });
    }
  });

  it('writes nothing per request when LOG_LEVEL is warn', async () => {
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const t = await startTributary({ environment: { LOG_LEVEL: 'warn' }, logDestination: output });
    try {
      await fetch(`${t.baseUrl}/v1beta/workspaces`, { headers: { authorization: `Bearer ${t.adminToken}` } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const entries = text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line));
      expect(entries.filter((entry) => entry.level === 'info' || entry.context === 'HTTP')).toEqual([]);
    } finally {
      await t.stop({ removeData: true });
    }
  });
});
