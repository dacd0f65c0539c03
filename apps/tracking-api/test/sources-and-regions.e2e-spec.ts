// Write keys follow the Config API (docs/tracking-api.md §4.3 rule 5): a new source accepts messages and a deleted one is
// refused, each within a second; a workspace's region decides which deployment takes its messages.
import { randomUUID } from 'node:crypto';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { TrackingCounters } from '../src/shared/tracking-counters';
import {
  createSource,
  createWorkspace,
  createWorkspaceAndSource,
  deleteSource,
  expectErrorBody,
  pollUntil,
  postJson,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

const track = () => ({ type: 'track', userId: 'u', event: 'Probe', messageId: randomUUID() });

describe('sources created and deleted through the Config API', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('accepts messages for a new source within a second and refuses them within a second of its deletion', async () => {
    const workspace = await createWorkspace(t);
    const source: TestSource = await createSource(t, workspace);
    const accepted = await pollUntil('the new write key is accepted', 1000, async () => {
      const response = await postJson(t, '/v1/batch', { batch: [track()] }, source.writeKey);
      return response.status === 200 ? response : undefined;
    });
    expect(accepted.value.body).toEqual({ success: true });
    expect(accepted.elapsedMs).toBeLessThanOrEqual(1000);

    const counters = t.app.get(TrackingCounters);
    await deleteSource(t, source);
    const refusedBefore = counters.refusedWriteKeys;
    const refused = await pollUntil('the deleted write key is refused', 1000, async () => {
      const response = await postJson(t, '/v1/batch', { batch: [track()] }, source.writeKey);
      return response.status === 401 ? response : undefined;
    });
    expectErrorBody(refused.value, 401, 'invalid_write_key');
    expect(refused.elapsedMs).toBeLessThanOrEqual(1000);
    expect(counters.refusedWriteKeys).toBeGreaterThan(refusedBefore);

    // Refused on every route and with the body key too; nothing of the refused requests reaches the log.
    const storedBefore = (await readSourceMessages(t, source)).size;
    expectErrorBody(
      await postJson(t, '/v1/identify', { userId: 'u', writeKey: source.writeKey }),
      401,
      'invalid_write_key',
    );
    expectErrorBody(
      await postJson(t, '/v1/import', { batch: [track()] }, source.writeKey),
      401,
      'invalid_write_key',
    );
    expect((await readSourceMessages(t, source)).size).toBe(storedBefore);
  });

  it('keeps the other sources of the workspace working when one is deleted', async () => {
    const workspace = await createWorkspace(t);
    const kept = await createSource(t, workspace);
    const deleted = await createSource(t, workspace);
    await deleteSource(t, deleted);

    expect((await postJson(t, '/v1/batch', { batch: [track()] }, kept.writeKey)).status).toBe(200);
    expect((await postJson(t, '/v1/batch', { batch: [track()] }, deleted.writeKey)).status).toBe(401);
  });
});

describe('regions', () => {
  describe('on a us deployment', () => {
    let t: TributaryTestInstance;

    beforeAll(async () => {
      t = await startTributary({ environment: { TRIBUTARY_REGION: 'us' } });
    });

    afterAll(async () => {
      await t?.stop({ removeData: true });
    });

    it('refuses messages of an eu workspace with 400 wrong_region naming eu, and stores nothing', async () => {
      const source = await createWorkspaceAndSource(t, { region: 'eu' });
      const response = await postJson(t, '/v1/batch', { batch: [track()] }, source.writeKey);

      expectErrorBody(response, 400, 'wrong_region');
      expect(response.body.message).toMatch(/"eu"/);
      expect((await readSourceMessages(t, source)).size).toBe(0);
    });

    it('accepts messages of a us workspace and of one created without a region', async () => {
      for (const region of ['us', undefined] as const) {
        const source = await createWorkspaceAndSource(t, { region });
        expect((await postJson(t, '/v1/batch', { batch: [track()] }, source.writeKey)).status).toBe(200);
      }
    });
  });

  describe('on a deployment started with TRIBUTARY_REGION=eu', () => {
    let t: TributaryTestInstance;

    beforeAll(async () => {
      t = await startTributary({ environment: { TRIBUTARY_REGION: 'eu' } });
    });

    afterAll(async () => {
      await t?.stop({ removeData: true });
    });

    it('accepts messages of an eu workspace and of one that defaulted to the deployment region', async () => {
      const explicit = await createWorkspaceAndSource(t, { region: 'eu' });
      const defaulted = await createWorkspaceAndSource(t);
      expect((await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, explicit.writeKey)).status).toBe(
        200,
      );
      expect((await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, defaulted.writeKey)).status).toBe(
        200,
      );
      expect((await readSourceMessages(t, explicit)).size).toBe(1);
    });

    it('refuses messages of a us workspace with 400 wrong_region naming us', async () => {
      const source = await createWorkspaceAndSource(t, { region: 'us' });
      const response = await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, source.writeKey);
      expectErrorBody(response, 400, 'wrong_region');
      expect(response.body.message).toMatch(/"us"/);
    });
  });
});
