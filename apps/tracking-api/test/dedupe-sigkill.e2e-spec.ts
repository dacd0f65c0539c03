// SIGKILL at each step of the dedupe write path (TRIBUTARY_TEST_DEDUPE_CRASH_AT), then a restart on
// the same data and index, and the client's retry of the very same messageIds: every id ends up
// stored exactly once, whether the crash came before the append (the retry must be stored, never
// refused), during it, after it, or around the index follower's commit (the index catches up from
// the log). The guard window is 1 s, so the second retry, seconds later, is refused by the index alone.
import { CRASH_AT_STEP_VARIABLE, DEDUPE_WRITE_STEPS } from '@tributary/dedupe/testing';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POLLING_ENVIRONMENT, trackMessage } from '../../router/test/router-e2e.kit';
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { copiesOf, storedTrackingMessageIds } from '../../../test/support/tracking-log.reader';
import { spawnTributaryApp, type TributaryProcess } from '../../../test/support/tributary-process';

const GUARD_MS = 1_000;

describe('tracking API killed with SIGKILL at each step of the dedupe write path', () => {
  let nats: NatsServerProcess;
  let dataDir: string;
  let configApi: TributaryProcess;
  let source: TestSource;
  let environment: Record<string, string>;
  const running: TributaryProcess[] = [];

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-dedupe-sigkill-'));
    environment = {
      ...POLLING_ENVIRONMENT,
      NATS_URL: nats.url,
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
      DEDUPE_INDEX: 'on',
      DEDUPE_GUARD_WINDOW: `${GUARD_MS}ms`,
    };
    configApi = await spawnTributaryApp('config-api', { dataDir, environment });
    running.push(configApi);
    source = await createWorkspaceAndSource({ baseUrl: configApi.baseUrl, adminToken: configApi.adminToken });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(running.map((child) => child.kill('SIGKILL')));
    await nats?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  function startTrackingApi(indexDir: string, crashAt?: string): Promise<TributaryProcess> {
    return spawnTributaryApp('tracking-api', {
      dataDir,
      adminToken: configApi.adminToken,
      environment: {
        ...environment,
        DEDUPE_INDEX_DIR: indexDir,
        ...(crashAt ? { [CRASH_AT_STEP_VARIABLE]: crashAt } : {}),
      },
    }).then((child) => {
      running.push(child);
      return child;
    });
  }

  /** Sends the batch until it is answered 200, as a client retries after errors and 503s. */
  async function sendUntilAccepted(trackingApi: TributaryProcess, batch: Array<Record<string, unknown>>) {
    await pollUntil('the batch is accepted', 20_000, async () => {
      const response = await postJson(
        { baseUrl: trackingApi.baseUrl, adminToken: configApi.adminToken },
        '/v1/batch',
        { batch },
        source.writeKey,
      ).catch(() => undefined);
      return response?.status === 200 ? true : undefined;
    });
  }

  it.each(DEDUPE_WRITE_STEPS.map((step) => [step]))(
    'stores each messageId once when killed at %s and retried with the same ids',
    async (step) => {
      const indexDir = join(dataDir, `index-${step}`);
      // The first process learns the write key (a warm-up batch), then is stopped; the second one
      // dies on the first batch that reaches the step.
      const warmUp = await startTrackingApi(indexDir);
      await sendUntilAccepted(warmUp, [trackMessage({ event: `warm-up ${step}` })]);
      await warmUp.kill('SIGTERM');

      const doomed = await startTrackingApi(indexDir, `${step}:1`);
      const batch = Array.from({ length: 40 }, (_, index) => trackMessage({ event: `${step} ${index}` }));
      const ids = batch.map((message) => message.messageId as string);
      const firstAttempt = await postJson(
        { baseUrl: doomed.baseUrl, adminToken: configApi.adminToken },
        '/v1/batch',
        { batch },
        source.writeKey,
      ).catch((error: unknown) => error);
      if (step === 'after-lookup' || step === 'during-append' || step === 'after-append') {
        // Killed before answering: the client's request failed, it never got a 200.
        expect((firstAttempt as { status?: number }).status).toBeUndefined();
        expect(String(firstAttempt)).toMatch(/fetch failed|socket|ECONNRESET|closed/i);
      }
      await pollUntil('the process is dead', 10_000, async () =>
        doomed.child.signalCode !== null || doomed.child.exitCode !== null ? true : undefined,
      );
      expect(doomed.child.signalCode).toBe('SIGKILL');
      if (step === 'after-lookup')
        expect(copiesOf(await storedTrackingMessageIds(nats.url), ids)).toEqual(ids.map(() => 0));

      const restarted = await startTrackingApi(indexDir);
      await sendUntilAccepted(restarted, batch);
      expect(copiesOf(await storedTrackingMessageIds(nats.url), ids)).toEqual(ids.map(() => 1));
      // Long after the guard window: only the index, caught up from the log, can refuse them now.
      await sleep(GUARD_MS + 1_000);
      await sendUntilAccepted(restarted, batch);
      expect(copiesOf(await storedTrackingMessageIds(nats.url), ids)).toEqual(ids.map(() => 1));
      await restarted.kill('SIGTERM');
    },
    90_000,
  );
});
