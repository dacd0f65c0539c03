// Fuzz of the Config API's write routes with hostile bodies (issue 10): nested tens of thousands deep,
// wide (up to 100k keys or items), and huge (megabytes), at the top of the body or inside the resource,
// sent to every write route of the standalone config-api and of a router (its dead-letter redrive).
// Every answer is below 500 in the documented error body, and afterwards every process of the
// deployment keeps serving: each is ready, the Config API reads and writes, the tracking API learns a
// source created after the fuzz, and the router delivers its message. Apps share config through one
// SQLite event store (same DATA_DIR), as the production topology shares KurrentDB.
// Runs are seeded: FUZZ_SEED=<n> replays a failure that fast-check reports.
import { NatsServerProcess } from '@tributary/event-log/testing';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  trackMessage,
  waitForAccepted,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { describeResponse, rawRequest, type RawRequest, type RawResponse } from '../support/raw-http';
import {
  createSource,
  createWorkspace,
  pollUntil,
  postJson,
  type ApiEndpoint,
} from '../support/tracking-e2e.kit';
import { configApi } from '../support/config-api.client';
import { spawnTributaryApp, type TributaryProcess } from '../support/tributary-process';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);

/** Where the hostile value goes in a body the route accepts. */
const PLACEHOLDER = '"__hostile__"';

interface WriteRoute {
  method: 'POST' | 'PATCH' | 'PUT';
  path: string;
  /** A body the route accepts, with `PLACEHOLDER` where a value may go. */
  template: string;
  /** Served by the router process rather than the Config API process. */
  router?: boolean;
}

/** JSON text nested `depth` deep, built by repetition (no recursive serializer could build it). */
function deepText(depth: number, kind: 'object' | 'array' | 'mixed'): string {
  if (kind === 'array') return '['.repeat(depth) + '1' + ']'.repeat(depth);
  if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  return '{"a":['.repeat(depth) + '1' + ']}'.repeat(depth);
}

function wideText(count: number, kind: 'keys' | 'items'): string {
  const parts: string[] = [];
  for (let index = 0; index < count; index += 1)
    parts.push(kind === 'keys' ? `"k${index}":${index}` : `${index}`);
  return kind === 'keys' ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
}

const hostileValue: fc.Arbitrary<{ label: string; text: string }> = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 33, max: 200_000 }),
      fc.constantFrom('object' as const, 'array' as const, 'mixed' as const),
    )
    .map(([depth, kind]) => ({ label: `${kind} nested ${depth} deep`, text: deepText(depth, kind) })),
  fc
    .tuple(fc.integer({ min: 1_000, max: 100_000 }), fc.constantFrom('keys' as const, 'items' as const))
    .map(([count, kind]) => ({ label: `${count} ${kind}`, text: wideText(count, kind) })),
  fc
    .integer({ min: 200_000, max: 4_500_000 })
    .map((length) => ({ label: `a string of ${length} bytes`, text: JSON.stringify('x'.repeat(length)) })),
  fc.constant({ label: 'just under the size cap', text: JSON.stringify('y'.repeat(255 * 1024)) }),
);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(request: RawRequest, response: RawResponse, why: string): never {
  const shown = { ...request, body: `<${String(request.body ?? '').length} bytes>` };
  throw new Error(`${why}: ${describeResponse(shown, response)}`);
}

describe('hostile request bodies on every write route, every process keeps serving', () => {
  const processes: TributaryProcess[] = [];
  let nats: NatsServerProcess;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let configApiProcess: TributaryProcess;
  let routerProcess: TributaryProcess;
  let trackingApiProcess: TributaryProcess;
  let configEndpoint: ApiEndpoint;
  let routes: WriteRoute[];
  const statuses = new Map<number, number>();

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-hostile-bodies-'));
    receiver = await WebhookReceiver.start({ secret: 'after-the-fuzz' });
    const environment = {
      ...POLLING_ENVIRONMENT,
      NATS_URL: nats.url,
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
    };
    configApiProcess = await spawnTributaryApp('config-api', {
      dataDir,
      environment,
      startTimeoutMs: 60_000,
    });
    processes.push(configApiProcess);
    const { adminToken } = configApiProcess;
    configEndpoint = { baseUrl: configApiProcess.baseUrl, adminToken };
    [routerProcess, trackingApiProcess] = await Promise.all([
      spawnTributaryApp('router', { dataDir, adminToken, environment, startTimeoutMs: 60_000 }),
      spawnTributaryApp('tracking-api', { dataDir, adminToken, environment, startTimeoutMs: 60_000 }),
    ]);
    processes.push(routerProcess, trackingApiProcess);

    const workspace = await createWorkspace(configEndpoint);
    const ws = workspace.slug;
    const source = await createSource(configEndpoint, workspace, 'javascript');
    const sourceName = `workspaces/${ws}/sources/${source.sourceSlug}`;
    const destination = `${sourceName}/destinations/actions-google-analytics-4`;
    const ok = async (method: 'POST', path: string, body: unknown) => {
      const response = await configApi(configEndpoint, method, path, body);
      if (response.status !== 200) throw new Error(`${method} ${path}: ${JSON.stringify(response.body)}`);
      return response.body;
    };
    await ok('POST', `${sourceName}/destinations`, { destination: { name: destination } });
    const filter = await ok('POST', `${destination}/filters`, {
      filter: { title: 'f', if: 'all', actions: [{ type: 'drop_event' }] },
    });
    const plan = await ok('POST', `workspaces/${ws}/tracking-plans`, {
      tracking_plan: { display_name: 'Plan', type: 'TRACKING_PLAN_TYPE_LIVE' },
    });
    const planName = `workspaces/${ws}/tracking-plans/${plan.tracking_plan?.id ?? plan.id}`;

    routes = [
      {
        method: 'POST',
        path: 'workspaces',
        template: `{"workspace":{"name":"workspaces/fz-new","display_name":${PLACEHOLDER}}}`,
      },
      {
        method: 'PATCH',
        path: `workspaces/${ws}`,
        template: `{"workspace":{"display_name":${PLACEHOLDER}}}`,
      },
      {
        method: 'POST',
        path: `workspaces/${ws}/sources`,
        template: `{"source":{"name":"${sourceName}-2","catalog_name":"catalog/sources/javascript","labels":${PLACEHOLDER}}}`,
      },
      { method: 'PATCH', path: `${sourceName}/schema-config`, template: `{"schema_config":${PLACEHOLDER}}` },
      {
        method: 'POST',
        path: `${sourceName}/destinations`,
        template: `{"destination":{"name":"${sourceName}/destinations/actions-mixpanel","config":[{"name":"token","value":${PLACEHOLDER}}]}}`,
      },
      {
        method: 'PATCH',
        path: destination,
        template: `{"destination":{"config":[{"name":"measurementId","value":${PLACEHOLDER}}]},"update_mask":{"paths":["destination.config"]}}`,
      },
      {
        method: 'POST',
        path: `${destination}/filters`,
        template: `{"filter":{"title":"t","if":"all","actions":[{"type":"blacklist_fields","fields":{"properties":{"fields":${PLACEHOLDER}}}}]}}`,
      },
      {
        method: 'PATCH',
        path: filter.name,
        template: `{"filter":{"actions":${PLACEHOLDER}},"update_mask":{"paths":["actions"]}}`,
      },
      {
        method: 'POST',
        path: `workspaces/${ws}/tracking-plans`,
        template: `{"tracking_plan":{"display_name":"P","type":"TRACKING_PLAN_TYPE_LIVE","rules":{"events":[{"name":"E","version":1,"rules":${PLACEHOLDER}}]}}}`,
      },
      { method: 'PUT', path: planName, template: `{"tracking_plan":{"rules":{"events":${PLACEHOLDER}}}}` },
      { method: 'POST', path: `${planName}/source-connections`, template: `{"source_name":${PLACEHOLDER}}` },
      {
        method: 'POST',
        path: `workspaces/${ws}/oauth-applications`,
        template: `{"oauth_application":{"display_name":"J","public_keys":${PLACEHOLDER}}}`,
      },
      {
        method: 'POST',
        path: `${destination}/replays`,
        template: `{"replay":{"start_time":${PLACEHOLDER}}}`,
      },
      {
        method: 'POST',
        path: 'access-tokens',
        template: `{"access_token":{"description":${PLACEHOLDER},"scopes":"workspace","workspace_names":["workspaces/${ws}"]}}`,
      },
      {
        method: 'POST',
        path: `${destination}/dead-letters:redrive`,
        template: `{"filter":${PLACEHOLDER}}`,
        router: true,
      },
    ];
  }, 180_000);

  afterAll(async () => {
    await Promise.all(processes.map((child) => child.kill('SIGTERM')));
    await receiver?.close();
    await nats?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function expectEveryProcessServes(): Promise<void> {
    for (const child of processes) {
      const ready = await fetch(`${child.baseUrl}/health/ready`);
      if (ready.status !== 200)
        throw new Error(`${child.baseUrl} not ready (${ready.status}):\n${child.output()}`);
      expect(child.child.exitCode).toBeNull();
    }
    const workspaces = await configApi(configEndpoint, 'GET', 'workspaces');
    expect(workspaces.status).toBe(200);
  }

  it('answers every hostile body below 500 with the documented error body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: routes.length - 1 }),
        hostileValue,
        fc.constantFrom('inside' as const, 'whole body' as const),
        async (routeIndex, value, where) => {
          const route = routes[routeIndex];
          const body = where === 'inside' ? route.template.replace(PLACEHOLDER, value.text) : value.text;
          const target = route.router ? routerProcess : configApiProcess;
          const request: RawRequest = {
            method: route.method,
            path: `/v1beta/${route.path}`,
            headers: {
              authorization: `Bearer ${configApiProcess.adminToken}`,
              'content-type': 'application/json',
            },
            body,
          };
          const response = await rawRequest(target.port, request);
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status >= 500) fail(request, response, `a 5xx for ${value.label} (${where})`);
          if (response.status === 200) return;
          const answer = response.body;
          if (!isPlainObject(answer) || typeof answer.error !== 'string' || typeof answer.code !== 'number') {
            fail(request, response, `not the Config API error body for ${value.label} (${where})`);
          }
        },
      ),
      { seed: SEED, numRuns: 150, endOnFailure: true },
    );
    // Bodies past the caps are refused as invalid: the caps, not luck, keep them out.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    await expectEveryProcessServes();
  }, 600_000);

  it('then every process still learns new config and serves it', async () => {
    await expectEveryProcessServes();
    const workspace = await createWorkspace(configEndpoint);
    const source = await createSource(configEndpoint, workspace);
    await createWebhookDestination(configEndpoint, source, 'webhooks', receiver, 'after-the-fuzz');
    const message = trackMessage({ event: 'After The Fuzz' });
    // The tracking API learns the new write key from the shared store within a poll interval.
    await pollUntil('the tracking API accepts the new source', 20_000, async () => {
      const response = await postJson(
        { baseUrl: trackingApiProcess.baseUrl, adminToken: configApiProcess.adminToken },
        '/v1/batch',
        { batch: [message] },
        source.writeKey,
      );
      return response.status === 200 ? true : undefined;
    });
    await waitForAccepted(receiver, [message.messageId], 30_000);
  }, 120_000);
});
