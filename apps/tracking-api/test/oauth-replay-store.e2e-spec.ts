// A client assertion's jti is used once for the whole deployment: the replay record lives in the
// event log (a table of the sqlite log, a JetStream stream on NATS), so neither a restart nor a
// second tracking API process sharing the nats-server accepts the same assertion again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAccessTokenSecret } from '@tributary/auth';
import { EVENT_LOG } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { createWorkspace, pollUntil } from '../../../test/support/tracking-e2e.kit';
import { spawnTributaryApp, type TributaryProcess } from '../../../test/support/tributary-process';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createOAuthApplication,
  postToken,
  signAssertion,
  tokenForm,
  type TestOAuthApplication,
} from './oauth-e2e.kit';

jest.setTimeout(120_000);

/** Both processes must agree on the audience: each would otherwise expect its own address. */
const PUBLIC_BASE_URL = 'https://tracking.tributary.example';

const assertionOf = (application: TestOAuthApplication) =>
  signAssertion({ clientId: application.clientId, key: application.key, aud: PUBLIC_BASE_URL });

describe('a jti replayed after a restart', () => {
  let dataDir: string;
  let t: TributaryTestInstance | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-oauth-restart-'));
  });

  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused by the restarted process (embedded sqlite log)', async () => {
    const adminToken = generateAccessTokenSecret();
    const environment = { PUBLIC_BASE_URL };
    t = await startTributary({ dataDir, adminToken, environment });
    const workspace = await createWorkspace(t);
    const application = await createOAuthApplication(t, workspace.slug);
    const assertion = await assertionOf(application);
    expect((await postToken(t, tokenForm(assertion))).status).toBe(200);
    await t.stop();

    t = await startTributary({ dataDir, adminToken, environment });
    // The restarted process knows the client (a fresh assertion works) ...
    await pollUntil('the restarted process knows the client', 20_000, async () =>
      (await postToken(t!, tokenForm(await assertionOf(application)))).status === 200 ? true : undefined,
    );
    // ... and still remembers the jti it granted before the restart.
    const replay = await postToken(t, tokenForm(assertion));
    expect({ status: replay.status, error: replay.body?.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
    expect(replay.body.error_description).toMatch(/jti/);
  });
});

describe('a jti replayed on a second process sharing the nats-server', () => {
  let nats: NatsServerProcess;
  let dataDir: string;
  let first: TributaryTestInstance | undefined;
  let second: TributaryProcess | undefined;

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-oauth-replica-'));
  });

  afterAll(async () => {
    await second?.kill();
    await first?.stop();
    await nats?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused by the other process, either way round', async () => {
    const adminToken = generateAccessTokenSecret();
    const environment = { NATS_URL: nats.url, PUBLIC_BASE_URL };
    // Both share the config store (sqlite under one DATA_DIR, read by polling) and its deployment key.
    first = await startTributary({ dataDir, adminToken, environment });
    second = await spawnTributaryApp('tracking-api', {
      dataDir,
      adminToken,
      environment,
      startTimeoutMs: 60_000,
    });
    const workspace = await createWorkspace(first);
    const application = await createOAuthApplication(first, workspace.slug);
    await pollUntil('the second process knows the client', 30_000, async () =>
      (await postToken(second!, tokenForm(await assertionOf(application)))).status === 200 ? true : undefined,
    );

    const grantedByFirst = await assertionOf(application);
    expect((await postToken(first, tokenForm(grantedByFirst))).status).toBe(200);
    const replayedOnSecond = await postToken(second, tokenForm(grantedByFirst));
    expect({ status: replayedOnSecond.status, error: replayedOnSecond.body?.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });

    const grantedBySecond = await assertionOf(application);
    expect((await postToken(second, tokenForm(grantedBySecond))).status).toBe(200);
    const replayedOnFirst = await postToken(first, tokenForm(grantedBySecond));
    expect({ status: replayedOnFirst.status, error: replayedOnFirst.body?.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });

    // Sent to both at once, exactly one of them grants it.
    const raced = tokenForm(await assertionOf(application));
    const statuses = (await Promise.all([postToken(first, raced), postToken(second, raced)])).map(
      (r) => r.status,
    );
    expect(statuses.sort()).toEqual([200, 401]);
  });
});

describe('a token request while the replay store is unreachable', () => {
  let nats: NatsServerProcess;
  let t: TributaryTestInstance | undefined;

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await nats?.dispose();
  });

  it('is answered 503 temporarily_unavailable with Retry-After, then served once it is back', async () => {
    t = await startTributary({ environment: { NATS_URL: nats.url, PUBLIC_BASE_URL } });
    const workspace = await createWorkspace(t);
    const application = await createOAuthApplication(t, workspace.slug);
    await nats.stop();
    const assertion = await assertionOf(application);
    const refused = await postToken(t, tokenForm(assertion));
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 503,
      body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
    });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    await nats.restart();
    // Not stored while refused: the same assertion is granted once the store is back.
    await pollUntil('the token endpoint recovers', 30_000, async () =>
      (await postToken(t!, tokenForm(assertion))).status === 200 ? true : undefined,
    );
  });
});

describe("one workspace's clients against the shared replay store", () => {
  let t: TributaryTestInstance | undefined;

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('cannot fill it: past its share they get 429 slow_down, and another workspace still gets tokens', async () => {
    t = await startTributary({ environment: { PUBLIC_BASE_URL, OAUTH_ASSERTIONS_PER_WORKSPACE: '30' } });
    // A small store stands for the deployment's 100,000 places; the sqlite log reads it per call.
    const replayStore = t.app.get<symbol, { options: { seenOnceCapacity?: number } }>(EVENT_LOG);
    replayStore.options.seenOnceCapacity = 60;
    const greedy = await createWorkspace(t);
    const clients = [];
    for (let count = 0; count < 4; count++) clients.push(await createOAuthApplication(t, greedy.slug));
    const other = await createOAuthApplication(t, (await createWorkspace(t)).slug);

    // Every client at its own rate (20 per second), for longer than the store would last.
    const statuses: number[] = [];
    for (let second = 0; second < 2; second++) {
      const round = await Promise.all(
        clients.flatMap((client) =>
          Array.from(
            { length: 20 },
            async () => (await postToken(t!, tokenForm(await assertionOf(client)))).status,
          ),
        ),
      );
      statuses.push(...round);
      await new Promise((resolve) => setTimeout(resolve, 1_050));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.filter((status) => status === 503)).toHaveLength(0);
    const refused = await postToken(t, tokenForm(await assertionOf(clients[0])));
    expect({ status: refused.status, error: refused.body?.error }).toEqual({
      status: 429,
      error: 'slow_down',
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1);

    const response = await postToken(t, tokenForm(await assertionOf(other)));
    expect(response.status).toBe(200);
    expect(typeof response.body.access_token).toBe('string');
  });
});
