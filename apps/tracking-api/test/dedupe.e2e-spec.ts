// Deduplication on messageId (docs/tracking-api.md §6.3, §12.1) over loopback HTTP, read back from the event log.
import { randomUUID } from 'node:crypto';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { TrackingCounters } from '../src/shared/tracking-counters';
import {
  createWorkspaceAndSource,
  expectErrorBody,
  postJson,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('deduplication on messageId', () => {
  let t: TributaryTestInstance;
  let counters: TrackingCounters;

  beforeAll(async () => {
    t = await startTributary();
    counters = t.app.get(TrackingCounters);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  const track = (messageId?: string | null, event = 'Clicked') => ({
    type: 'track',
    userId: 'u-1',
    event,
    ...(messageId !== undefined && { messageId }),
  });

  it('stores a messageId sent twice in one batch once, answers 200, and counts one duplicate', async () => {
    const source = await createWorkspaceAndSource(t);
    const messageId = randomUUID();
    const duplicatesBefore = counters.duplicates;
    const acceptedBefore = counters.accepted;

    const response = await postJson(
      t,
      '/v1/batch',
      { batch: [track(messageId, 'First'), track(messageId, 'Second')] },
      source.writeKey,
    );

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    const stored = await readSourceMessages(t, source);
    expect([...stored.keys()]).toEqual([messageId]);
    expect(counters.duplicates - duplicatesBefore).toBe(1);
    expect(counters.accepted - acceptedBefore).toBe(1);
  });

  it('stores a messageId sent in two requests once; the retry gets 200 and the first copy is kept', async () => {
    const source = await createWorkspaceAndSource(t);
    const messageId = randomUUID();
    const duplicatesBefore = counters.duplicates;

    const first = await postJson(t, '/v1/track', {
      ...track(messageId, 'Original'),
      writeKey: source.writeKey,
    });
    const retry = await postJson(t, '/v1/batch', { batch: [track(messageId, 'Retried')] }, source.writeKey);

    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body).toEqual({ success: true });
    const stored = await readSourceMessages(t, source);
    expect(stored.size).toBe(1);
    expect(stored.get(messageId)!.payload.event).toBe('Original');
    expect(counters.duplicates - duplicatesBefore).toBe(1);
  });

  it('is global: the same messageId from another source of another workspace is a duplicate too', async () => {
    const first = await createWorkspaceAndSource(t);
    const second = await createWorkspaceAndSource(t);
    const messageId = randomUUID();
    const duplicatesBefore = counters.duplicates;

    expect((await postJson(t, '/v1/batch', { batch: [track(messageId)] }, first.writeKey)).status).toBe(200);
    expect((await postJson(t, '/v1/batch', { batch: [track(messageId)] }, second.writeKey)).status).toBe(200);

    expect((await readSourceMessages(t, first)).size).toBe(1);
    expect((await readSourceMessages(t, second)).size).toBe(0);
    expect(counters.duplicates - duplicatesBefore).toBe(1);
  });

  it('gives messages without a messageId (absent, null, "") fresh UUIDs; identical ones are never duplicates', async () => {
    const source: TestSource = await createWorkspaceAndSource(t);
    const duplicatesBefore = counters.duplicates;

    const batch = { batch: [track(), track(null), track('')] };
    const responses = [
      await postJson(t, '/v1/batch', batch, source.writeKey),
      await postJson(t, '/v1/batch', batch, source.writeKey),
    ];
    const single = await postJson(t, '/v1/track', { userId: 'u-1', event: 'Clicked' }, source.writeKey);

    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    expect(single.status).toBe(200);
    const stored = await readSourceMessages(t, source);
    expect(stored.size).toBe(7);
    for (const [messageId, message] of stored) {
      expect(messageId).toMatch(UUID_V4);
      expect(message.payload.messageId).toBe(messageId);
    }
    expect(counters.duplicates - duplicatesBefore).toBe(0);
  });

  describe('messageIds with control characters (they become the Nats-Msg-Id header on JetStream)', () => {
    it.each([
      ['CR LF', 'id\r\nNats-Expected-Stream: OTHER'],
      ['LF', 'line\nbreak'],
      ['CR', 'carriage\rreturn'],
      ['NUL', 'nul\u0000id'],
      ['TAB', 'tab\tid'],
      ['DEL', 'del\u007fid'],
    ])(
      'refuses one with %s: 400 invalid_message_id on a single route, nothing stored',
      async (_, messageId) => {
        const source = await createWorkspaceAndSource(t);
        const response = await postJson(t, '/v1/track', track(messageId), source.writeKey);
        expectErrorBody(response, 400, 'invalid_message_id');
        expect((await readSourceMessages(t, source)).size).toBe(0);
      },
    );

    it('lists one in a batch as rejected and stores the valid messages beside it', async () => {
      const source = await createWorkspaceAndSource(t);
      const valid = randomUUID();
      const response = await postJson(
        t,
        '/v1/batch',
        { batch: [track('bad\r\nid'), track(valid)] },
        source.writeKey,
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        rejected: [
          { index: 0, messageId: 'bad\r\nid', code: 'invalid_message_id', message: expect.any(String) },
        ],
      });
      expect([...(await readSourceMessages(t, source)).keys()]).toEqual([valid]);
    });

    it('keeps ids with spaces, punctuation and non-ASCII letters', async () => {
      const source = await createWorkspaceAndSource(t);
      const ids = ['with space', 'ünïcødé-😀', 'a:b/c?d=e&f#g'];
      const response = await postJson(t, '/v1/batch', { batch: ids.map((id) => track(id)) }, source.writeKey);
      expect(response.body).toEqual({ success: true });
      expect([...(await readSourceMessages(t, source)).keys()].sort()).toEqual([...ids].sort());
    });
  });
});
