// `/metrics` is served on its own listener (METRICS_HOST:METRICS_PORT), never on the public port, by
// every process: the all-in-one server and the three standalone apps. `/health/*` stays public.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAccessTokenSecret } from '@tributary/auth';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  spawnTributaryApp,
  type TributaryApp,
  type TributaryProcess,
} from '../../../test/support/tributary-process';

jest.setTimeout(120_000);

describe('the all-in-one server', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('answers 404 for /metrics on its public port, in the tracking API error shape', async () => {
    for (const path of ['/metrics', '/metrics/', '/metrics?name[]=x']) {
      const response = await fetch(`${t.baseUrl}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      const body = await response.json();
      expect(body).toMatchObject({ success: false });
      expect(JSON.stringify(body)).not.toContain('tributary_http_requests_total');
    }
  });

  it('serves the Prometheus exposition on the metrics listener, on loopback', async () => {
    expect(new URL(t.metricsUrl).hostname).toBe('127.0.0.1');
    expect(new URL(t.metricsUrl).port).not.toBe(String(t.port));
    // A request on the public port first, so the exposition has a series to show.
    expect((await fetch(`${t.baseUrl}/health/live`)).status).toBe(200);
    const response = await fetch(t.metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('# TYPE tributary_http_requests_total counter');
    expect(text).toMatch(
      /tributary_http_requests_total\{method="GET",route="\/health\/live",status_class="2xx"\} 1/,
    );
  });

  it('answers nothing but GET /metrics on the metrics listener', async () => {
    const base = new URL(t.metricsUrl).origin;
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/health/live`)).status).toBe(404);
    expect((await fetch(`${base}/v1beta/workspaces`)).status).toBe(404);
    const post = await fetch(t.metricsUrl, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('refuses to start when the metrics port is taken, naming METRICS_PORT', async () => {
    const takenPort = new URL(t.metricsUrl).port;
    await expect(startTributary({ environment: { METRICS_PORT: takenPort } })).rejects.toThrow(
      new RegExp(
        `cannot serve /metrics on 127\\.0\\.0\\.1:${takenPort} \\(METRICS_HOST, METRICS_PORT\\): .*EADDRINUSE`,
      ),
    );
  });

  it('closes the metrics listener with the application', async () => {
    const other = await startTributary();
    const url = other.metricsUrl;
    expect((await fetch(url)).status).toBe(200);
    await other.stop({ removeData: true });
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('every standalone process', () => {
  const processes: TributaryProcess[] = [];
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-metrics-listener-'));
  });

  afterAll(async () => {
    await Promise.all(processes.map((child) => child.kill()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each<[TributaryApp, number]>([
    ['tributary', 404],
    ['config-api', 404],
    ['tracking-api', 404],
    ['router', 404],
  ])('%s serves /metrics on its metrics port only', async (app, publicStatus) => {
    const child = await spawnTributaryApp(app, {
      dataDir: join(dataDir, app),
      adminToken: generateAccessTokenSecret(),
      startTimeoutMs: 60_000,
    });
    processes.push(child);
    expect(new URL(child.metricsUrl).hostname).toBe('127.0.0.1');
    expect((await fetch(`${child.baseUrl}/metrics`)).status).toBe(publicStatus);
    expect((await fetch(`${child.baseUrl}/health/live`)).status).toBe(200);
    const scraped = await fetch(child.metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('tributary_http_requests_total');
  });
});
