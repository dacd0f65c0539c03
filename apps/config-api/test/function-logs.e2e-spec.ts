// A function's logs (Config API) and metrics (the router's route) over loopback HTTP on the
// all-in-one (specs/functions.md §7): entries written through the process's own log store and
// invocations through its own `FunctionMetrics`, as the runtime writes them; read back through the
// routes with the workspace's tokens; every refusal of bad input; erased when the function is deleted.
import { generateKsuid } from '@tributary/auth';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { FUNCTION_ID_PREFIXES, functionAggregate, type FunctionKind } from '@tributary/config-domain';
import { FUNCTION_LOG_STORE, type FunctionLogEntry, type FunctionLogStore } from '@tributary/event-log';
import { FunctionMetrics } from '@tributary/functions';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  type WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { pollUntil } from '../../../test/support/tracking-e2e.kit';

describe('Config API: function logs and metrics', () => {
  let t: TributaryTestInstance;
  let admin: ConfigApiClient;
  let access: WorkspaceAccess;
  let other: WorkspaceAccess;
  let store: FunctionLogStore;
  let metrics: FunctionMetrics;
  let destinationFn: string;
  let insertFn: string;
  let otherFn: string;
  const ws = `fn-logs-${process.pid}`;
  const otherWs = `fn-logs-other-${process.pid}`;
  const web = `workspaces/${ws}/sources/web/destinations/dfn_web`;
  const app = `workspaces/${ws}/sources/app/destinations/dfn_app`;

  const logs = (functionId: string, query = '', workspace = ws) =>
    `workspaces/${workspace}/functions/${functionId}/logs${query}`;
  const metricsPath = (functionId: string, workspace = ws) =>
    `workspaces/${workspace}/functions/${functionId}/metrics`;

  /** Creates a function through the command handler the function routes write through. */
  async function createFunction(workspace: WorkspaceAccess, kind: FunctionKind): Promise<string> {
    const functionId = `${FUNCTION_ID_PREFIXES[kind]}${generateKsuid(new Date())}`;
    const now = new Date().toISOString();
    await t.app.get(ConfigCommandHandler).handle(
      functionAggregate,
      { workspaceSlug: workspace.slug, functionId },
      {
        type: 'CreateFunction',
        workspaceSlug: workspace.slug,
        workspaceId: workspace.workspace.id,
        functionId,
        kind,
        draft: {
          displayName: `fn ${kind}`,
          description: '',
          logoUrl: '',
          code: 'async function onTrack(event) { console.log(event.event) }',
          settings: [],
        },
        workspaceExists: true,
        functionsInWorkspace: 0,
        limits: { maxCodeBytes: 131_072, maxFunctions: 100 },
        now,
        actor: 'access-tokens/e2e',
      },
      { actor: 'access-tokens/e2e', requestId: 'e2e', time: now },
    );
    return functionId;
  }

  let invocation = 0;
  function entry(
    functionId: string,
    message: string,
    extra: Partial<FunctionLogEntry> = {},
  ): FunctionLogEntry {
    invocation += 1;
    return {
      workspaceId: access.workspace.id,
      functionId,
      time: new Date(Date.UTC(2026, 0, 1, 0, 0, invocation)).toISOString(),
      level: 'log',
      message,
      version: 1,
      invocationId: `inv-${invocation}`,
      ...extra,
    };
  }

  beforeAll(async () => {
    t = await startTributary();
    admin = new ConfigApiClient(t);
    access = await createWorkspaceWithTokens(admin, ws);
    other = await createWorkspaceWithTokens(admin, otherWs);
    store = t.app.get<symbol, FunctionLogStore>(FUNCTION_LOG_STORE);
    metrics = t.app.get(FunctionMetrics);
    destinationFn = await createFunction(access, 'DESTINATION');
    insertFn = await createFunction(access, 'INSERT_DESTINATION');
    otherFn = await createFunction(other, 'DESTINATION');
    await store.appendFunctionLogs([
      entry(destinationFn, 'web one', { instance: web, messageId: 'm-1', level: 'info' }),
      entry(destinationFn, 'app one', { instance: app, messageId: 'm-2' }),
      entry(destinationFn, 'TypeError: boom', {
        instance: web,
        messageId: 'm-3',
        level: 'error',
        version: 2,
      }),
      entry(destinationFn, 'no instance', { level: 'debug' }),
      entry(insertFn, 'insert line'),
      { ...entry(otherFn, 'other workspace'), workspaceId: other.workspace.id },
    ]);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it("answers a function's entries newest first in the wire shape, to a read-only token", async () => {
    const response = await access.reader.get(logs(destinationFn));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      logs: [
        {
          time: expect.any(String),
          level: 'debug',
          message: 'no instance',
          instance: '',
          message_id: '',
          version: 1,
          invocation_id: expect.stringMatching(/^inv-/),
        },
        {
          time: expect.any(String),
          level: 'error',
          message: 'TypeError: boom',
          instance: web,
          message_id: 'm-3',
          version: 2,
          invocation_id: expect.stringMatching(/^inv-/),
        },
        expect.objectContaining({ message: 'app one', instance: app, message_id: 'm-2', level: 'log' }),
        expect.objectContaining({ message: 'web one', instance: web, message_id: 'm-1', level: 'info' }),
      ],
      next_page_token: '',
    });
    // The entry's own time, as the invocation wrote it.
    expect(response.body.logs[3].time).toMatch(/^2026-01-01T00:00:\d{2}\.000Z$/);
    const insert = await access.reader.get(logs(insertFn));
    expect(insert.body.logs.map((logged: { message: string }) => logged.message)).toEqual(['insert line']);
  });

  it('pages with page_size and page_token, and narrows to one instance', async () => {
    const first = await access.reader.get(logs(destinationFn, '?page_size=3'));
    expect(first.status).toBe(200);
    expect(first.body.logs).toHaveLength(3);
    expect(first.body.next_page_token).not.toBe('');
    const second = await access.reader.get(
      logs(destinationFn, `?page_size=3&page_token=${encodeURIComponent(first.body.next_page_token)}`),
    );
    expect(second.body).toEqual({
      logs: [expect.objectContaining({ message: 'web one' })],
      next_page_token: '',
    });
    const ofWeb = await access.reader.get(
      logs(destinationFn, `?instance=${encodeURIComponent(web)}&page_size=1`),
    );
    expect(ofWeb.body.logs.map((logged: { message: string }) => logged.message)).toEqual(['TypeError: boom']);
    const ofWebNext = await access.reader.get(
      logs(
        destinationFn,
        `?instance=${encodeURIComponent(web)}&page_size=1&page_token=${ofWeb.body.next_page_token}`,
      ),
    );
    expect(ofWebNext.body).toEqual({
      logs: [expect.objectContaining({ message: 'web one' })],
      next_page_token: '',
    });
    // An empty `instance=` is no narrowing; `page_size=0` is the default size.
    const all = await access.reader.get(logs(destinationFn, '?instance=&page_size=0'));
    expect(all.body.logs).toHaveLength(4);
  });

  it('answers 404 code 5 for a function unknown in the workspace of the URL', async () => {
    for (const path of [
      logs('dfn_00000000000000000000000000'),
      logs(otherFn),
      logs(destinationFn, '', otherWs),
      logs('..'),
      logs('a.b*c'),
      metricsPath('dfn_00000000000000000000000000'),
      metricsPath(otherFn),
      metricsPath(destinationFn, otherWs),
    ]) {
      const response = await admin.get(path);
      expectConfigApiError(response, 404, 5);
    }
    expectConfigApiError(await admin.get(logs(destinationFn, '', 'no-such-workspace')), 404, 5);
    expectConfigApiError(await admin.get(metricsPath(destinationFn, 'no-such-workspace')), 404, 5);
  });

  it('refuses a request without a token, and a token of another workspace as other routes do', async () => {
    expectConfigApiError(await admin.get(logs(destinationFn), { token: null }), 401, 16);
    expectConfigApiError(await admin.get(metricsPath(destinationFn), { token: null }), 401, 16);
    const sources = await other.reader.get(`workspaces/${ws}/sources`);
    expect(sources.status).toBeGreaterThanOrEqual(400);
    for (const path of [logs(destinationFn), metricsPath(destinationFn)]) {
      const response = await other.reader.get(path);
      expectConfigApiError(response, sources.status, sources.body.code);
    }
  });

  it('refuses a bad page size, page token or repeated parameter with 400 code 3', async () => {
    const foreignToken = Buffer.from('offset:2').toString('base64url');
    for (const query of [
      '?page_size=abc',
      '?page_size=1001',
      '?page_size=-1',
      '?page_size=1.5',
      '?page_size=1&page_size=2',
      '?page_token=nonsense',
      `?page_token=${foreignToken}`,
      '?page_token=a&page_token=b',
      '?instance=a&instance=b',
    ]) {
      const response = await access.reader.get(logs(destinationFn, query));
      expectConfigApiError(response, 400, 3);
    }
  });

  it("answers a function's metrics from the invocations recorded, and exports them to Prometheus", async () => {
    const zero = await access.reader.get(metricsPath(insertFn));
    expect(zero.status).toBe(200);
    expect(zero.body).toEqual({
      invocations: 0,
      outcomes: { success: 0, filtered: 0, discarded: 0, retried: 0, timeout: 0, memory_exceeded: 0 },
      duration_ms: { p50: null, p95: null },
      cpu_ms_total: 0,
    });
    metrics.record(access.workspace.id, destinationFn, 'DESTINATION', 'success', 10, 4);
    metrics.record(access.workspace.id, destinationFn, 'DESTINATION', 'success', 20, 4);
    metrics.record(access.workspace.id, destinationFn, 'DESTINATION', 'timeout', 5000);
    const response = await access.reader.get(metricsPath(destinationFn));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      invocations: 3,
      outcomes: { success: 2, filtered: 0, discarded: 0, retried: 0, timeout: 1, memory_exceeded: 0 },
      duration_ms: { p50: 20, p95: 5000 },
      cpu_ms_total: 8,
    });
    const scraped = await (await fetch(t.metricsUrl)).text();
    expect(scraped).toContain('tributary_function_invocations_total{kind="destination",outcome="success"} 2');
    expect(scraped).toContain('tributary_function_invocations_total{kind="destination",outcome="timeout"} 1');
    expect(scraped).toContain('tributary_function_duration_seconds_count{kind="destination"} 3');
    expect(scraped).not.toContain(destinationFn);
  });

  it("erases a function's logs when the function is deleted", async () => {
    const doomed = await createFunction(access, 'DESTINATION');
    await store.appendFunctionLogs([entry(doomed, 'before the delete')]);
    expect((await access.reader.get(logs(doomed))).body.logs).toHaveLength(1);
    await t.app
      .get(ConfigCommandHandler)
      .handle(
        functionAggregate,
        { workspaceSlug: ws, functionId: doomed },
        { type: 'DeleteFunction', instances: 0 },
        { actor: 'access-tokens/e2e', requestId: 'e2e-delete', time: new Date().toISOString() },
      );
    expectConfigApiError(await access.reader.get(logs(doomed)), 404, 5);
    await pollUntil('the deleted function has no logs left in the store', 5_000, async () => {
      const page = await store.listFunctionLogs(access.workspace.id, doomed, { pageSize: 10 });
      return page.entries.length === 0 ? true : undefined;
    });
    // The other functions' logs are kept.
    expect((await access.reader.get(logs(destinationFn))).body.logs).toHaveLength(4);
  });
});
