// The tracking API on a real nats-server with JetStream (NATS_URL set): messages land in stream TRACKING,
// an outage answers 503 and never 200 for a message that was not stored, and the service recovers by
// itself when the server comes back (docs/architecture.md invariant 1, docs/tracking-api.md §9.1).
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { SQLITE_EVENT_LOG_FILE_NAME, TRACKING_STREAM } from '@tributary/event-log';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { TrackingCounters } from '../src/shared/tracking-counters';
import {
  createWorkspaceAndSource,
  expectErrorBody,
  pollUntil,
  postJson,
  readSourceMessages,
  sleep,
  type TestSource,
  type TrackingResponse,
} from '../../../test/support/tracking-e2e.kit';

const natsServerBinary = NatsServerProcess.findBinary();
// Conditional, never unconditional: without a nats-server binary the JetStream mode cannot be run here.
const describeWithNats = natsServerBinary ? describe : describe.skip;
if (!natsServerBinary) {
  console.warn('jetstream.e2e-spec skipped: no nats-server binary (set NATS_SERVER_BIN or put it on PATH)');
}

describeWithNats('tracking API on JetStream (NATS_URL)', () => {
  let nats: NatsServerProcess;
  let t: TributaryTestInstance;
  let source: TestSource;
  /** The instance's JSON log lines at `warn` and above. */
  let logged = '';

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    const logDestination = new PassThrough();
    logDestination.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    t = await startTributary({ environment: { NATS_URL: nats.url, LOG_LEVEL: 'warn' }, logDestination });
    source = await createWorkspaceAndSource(t);
  }, 30_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await nats?.dispose();
  }, 30_000);

  const track = (messageId: string, event = 'On JetStream') => ({
    type: 'track',
    userId: 'u-js',
    event,
    messageId,
  });

  it('stores accepted messages in stream TRACKING under tracking.<workspace>.<source> with Nats-Msg-Id = messageId', async () => {
    const ids = [randomUUID(), randomUUID()];
    const response = await postJson(t, '/v1/batch', { batch: ids.map((id) => track(id)) }, source.writeKey);
    expect(response.status).toBe(200);

    // Read through the app's own EVENT_LOG (the JetStream adapter) ...
    const stored = await readSourceMessages(t, source);
    expect([...stored.keys()].sort()).toEqual([...ids].sort());
    expect(stored.get(ids[0])!.payload).toMatchObject({
      type: 'track',
      event: 'On JetStream',
      userId: 'u-js',
    });
    // ... and straight from the server with a connection of our own.
    const connection = await connect({ servers: nats.url });
    try {
      const manager = await jetstreamManager(connection);
      const last = await manager.streams.getMessage(TRACKING_STREAM, {
        last_by_subj: `tracking.${source.workspaceId}.${source.sourceId}`,
      });
      expect(last?.header.get('Nats-Msg-Id')).toBe(ids[1]);
      expect(last?.json<Record<string, unknown>>()).toMatchObject({ messageId: ids[1], type: 'track' });
    } finally {
      await connection.close();
    }
    // The embedded log is not used at all in this mode.
    expect(existsSync(join(t.dataDir, SQLITE_EVENT_LOG_FILE_NAME))).toBe(false);
  });

  it('deduplicates on messageId with JetStream: two requests, both 200, stored once, counted once', async () => {
    const counters = t.app.get(TrackingCounters);
    const duplicatesBefore = counters.duplicates;
    const messageId = randomUUID();
    const first = await postJson(
      t,
      '/v1/track',
      { userId: 'u-js', event: 'First', messageId },
      source.writeKey,
    );
    const retry = await postJson(t, '/v1/batch', { batch: [track(messageId, 'Retry')] }, source.writeKey);

    expect([first.status, retry.status]).toEqual([200, 200]);
    const stored = await readSourceMessages(t, source);
    expect(stored.get(messageId)!.payload.event).toBe('First');
    expect(counters.duplicates - duplicatesBefore).toBe(1);
  });

  it('answers 400 invalid_message_id, not 503, for a messageId with CR LF, and stores non-ASCII ids as they are', async () => {
    const response = await postJson(
      t,
      '/v1/track',
      { userId: 'u', event: 'E', messageId: 'evil\r\nNats-Expected-Stream: X' },
      source.writeKey,
    );
    expectErrorBody(response, 400, 'invalid_message_id');

    const unicodeId = `ünïcødé-😀-${randomUUID()}`;
    const batch = await postJson(
      t,
      '/v1/batch',
      { batch: [track('bad\nid'), track(unicodeId)] },
      source.writeKey,
    );
    expect(batch.status).toBe(200);
    expect(batch.body.rejected).toEqual([expect.objectContaining({ index: 0, code: 'invalid_message_id' })]);
    expect((await readSourceMessages(t, source)).get(unicodeId)?.payload.messageId).toBe(unicodeId);
  });

  it('answers 503 unavailable with Retry-After while nats-server is down, never 200, and recovers without a restart of Tributary', async () => {
    const counters = t.app.get(TrackingCounters);
    const unavailableBefore = counters.unavailable;
    const beforeOutage = randomUUID();
    expect((await postJson(t, '/v1/batch', { batch: [track(beforeOutage)] }, source.writeKey)).status).toBe(
      200,
    );

    await nats.stop();
    const duringOutage: Array<{ messageId: string; response: TrackingResponse; elapsedMs: number }> = [];
    try {
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const messageId = randomUUID();
        const started = Date.now();
        const response = await postJson(
          t,
          '/v1/batch',
          { batch: [track(messageId, 'During outage')] },
          source.writeKey,
        );
        duringOutage.push({ messageId, response, elapsedMs: Date.now() - started });
        await sleep(100);
      }
    } finally {
      await nats.restart();
    }

    for (const { response, elapsedMs } of duringOutage) {
      expectErrorBody(response, 503, 'unavailable');
      expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(30);
      // Bounded: at most the publish timeout (2 s), well under every client's request timeout (≥ 8 s).
      expect(elapsedMs).toBeLessThan(5000);
    }
    expect(counters.unavailable - unavailableBefore).toBe(duringOutage.length);
    // The operator reads why: the first 503 is logged with the log's reason, the rest are throttled
    // (one line per 10 s at most, counting the answers since the line before).
    const warnings = logged
      .split('\n')
      .filter((line) => line.includes('requests answered 503'))
      .map((line) => JSON.parse(line) as { level: string; context: string; message: string });
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThan(duringOutage.length);
    expect(warnings[0]).toMatchObject({ level: 'warn', context: 'TrackingApi' });
    expect(warnings[0].message).toMatch(
      /^requests answered 503 since the last such warning: 1; the latest because the message log did not store its batch: .+/,
    );

    // Same port and store: Tributary reconnects by itself; poll the API, bounded.
    const recoveredId = randomUUID();
    const recovery = await pollUntil(
      'the tracking API accepts messages again after nats-server restarted',
      20_000,
      async () => {
        const response = await postJson(
          t,
          '/v1/batch',
          { batch: [track(recoveredId, 'After outage')] },
          source.writeKey,
        );
        if (response.status === 200) return response;
        // While reconnecting, only the documented 503 is acceptable, never another status.
        expectErrorBody(response, 503, 'unavailable');
        return undefined;
      },
      250,
    );
    expect(recovery.value.body).toEqual({ success: true });

    // The clients retry what got 503; dedupe makes that safe whether or not a copy got through.
    const retried = await postJson(
      t,
      '/v1/batch',
      { batch: duringOutage.map(({ messageId }) => track(messageId, 'Retried')) },
      source.writeKey,
    );
    expect(retried.status).toBe(200);

    const stored = await readSourceMessages(t, source);
    expect(stored.get(beforeOutage)?.payload.event).toBe('On JetStream'); // survived the restart of nats-server
    expect(stored.get(recoveredId)?.payload.event).toBe('After outage');
    for (const { messageId } of duringOutage) expect(stored.has(messageId)).toBe(true);
  }, 60_000);
});
