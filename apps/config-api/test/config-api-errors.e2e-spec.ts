import { EVENT_STORE, EventStore } from '@tributary/event-store';
import { ConfigApiClient, createFixture, expectErrorBody, startConfigApi } from './config-api-e2e.kit';
import type { TributaryTestInstance } from '../../../test/support/tributary-test-instance';

/** Every row of the Config API's error table (spec §4), each with the `{error, code}` body. */
describe('Config API errors', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let fixture: Awaited<ReturnType<typeof createFixture>>;

  beforeAll(async () => {
    ({ instance, admin } = await startConfigApi());
    fixture = await createFixture(admin);
  });
  afterAll(() => instance.stop({ removeData: true }));

  describe('400, code 3: invalid argument', () => {
    it('invalid JSON', async () => {
      expectErrorBody(await admin.post('workspaces/acme/sources', '{"source": {'), 400, 3);
    });
    it('a field of the wrong type', async () => {
      const answer = await admin.post('workspaces/acme/sources/web/destinations', {
        destination: { name: 'webhooks', enabled: 'yes' },
      });
      expectErrorBody(answer, 400, 3);
      expect(answer.body.error).toMatch(/enabled/);
    });
    it('a bad page_size and a page_token this API never gave', async () => {
      expectErrorBody(await admin.get('workspaces/acme/sources?page_size=-1'), 400, 3);
      expectErrorBody(await admin.get('workspaces/acme/sources?page_token=forged'), 400, 3);
    });
    it('an update_mask path that is not a field', async () => {
      const answer = await admin.patch(fixture.destinationPath, {
        destination: {},
        update_mask: { paths: ['destination.colour'] },
      });
      expectErrorBody(answer, 400, 3);
      expect(answer.body.error).toMatch(/destination.colour/);
    });
    it('an invalid slug, a name outside the URL workspace, an unknown catalog entry', async () => {
      expectErrorBody(
        await admin.post('workspaces/acme/sources', { source: { name: 'workspaces/acme/sources/bad slug!', catalog_name: 'javascript' } }),
        400,
        3,
      );
      expectErrorBody(
        await admin.post('workspaces/acme/sources', { source: { name: 'workspaces/other/sources/x', catalog_name: 'javascript' } }),
        400,
        3,
      );
      expectErrorBody(
        await admin.post('workspaces/acme/sources', { source: { name: 'workspaces/acme/sources/x', catalog_name: 'catalog/sources/cobol' } }),
        400,
        3,
      );
      expectErrorBody(await admin.post('workspaces/acme/sources/web/destinations', { destination: { name: 'carrier-pigeon' } }), 400, 3);
    });
    it('a setting value of the wrong type and an unknown setting', async () => {
      expectErrorBody(await admin.patch(fixture.destinationPath, { destination: { config: [{ name: 'url', value: 42 }] } }), 400, 3);
      expectErrorBody(await admin.patch(fixture.destinationPath, { destination: { config: [{ name: 'colour', value: 'x' }] } }), 400, 3);
    });
    it('a filter whose FQL does not compile', async () => {
      const answer = await admin.post(`${fixture.destinationPath}/filters`, {
        filter: { if: "event = = 'x'", actions: [{ type: 'drop_event' }], enabled: true },
      });
      expectErrorBody(answer, 400, 3);
    });
  });

  describe('401, code 16: unauthenticated', () => {
    it('no token, a made-up token, Basic on a Bearer-only route', async () => {
      expectErrorBody(await admin.withToken('').get('workspaces'), 401, 16);
      expectErrorBody(await admin.withToken('A'.repeat(43) + '.' + 'B'.repeat(43)).get('workspaces'), 401, 16);
      const basic = await admin.withToken('').get('workspaces', {
        authorization: `Basic ${Buffer.from('someone@example.com:pw').toString('base64')}`,
      });
      expectErrorBody(basic, 401, 16);
    });
    it('a deleted token stops working at once', async () => {
      const created = await admin.ok('POST', 'access-tokens', {
        access_token: { description: 'short-lived', scopes: 'workspace', workspace_names: ['workspaces/acme'] },
      });
      const shortLived = admin.withToken(created.token);
      expect((await shortLived.get('workspaces/acme')).status).toBe(200);
      await admin.ok('DELETE', created.name);
      expectErrorBody(await shortLived.get('workspaces/acme'), 401, 16);
    });
  });

  describe('403, code 7: insufficient scope', () => {
    it('a write with a read-only token', async () => {
      const answer = await fixture.reader.post('workspaces/acme/sources', {
        source: { name: 'workspaces/acme/sources/denied', catalog_name: 'javascript' },
      });
      expectErrorBody(answer, 403, 7);
      expect(answer.body.error).toMatch(/insufficient scope/);
      expect((await fixture.reader.get('workspaces/acme/sources/denied')).status).toBe(404);
      expect((await fixture.reader.get('workspaces/acme/sources')).status).toBe(200);
    });
    it('a workspace token creating a workspace or a token', async () => {
      expectErrorBody(await fixture.writer.post('workspaces', { workspace: { name: 'workspaces/mine' } }), 403, 7);
      expectErrorBody(
        await fixture.writer.post('access-tokens', { access_token: { scopes: 'workspace', workspace_names: ['workspaces/acme'] } }),
        403,
        7,
      );
    });
  });

  describe('404, code 5: not found', () => {
    it('an unknown path and a method the path does not have', async () => {
      expectErrorBody(await admin.get('no/such/path'), 404, 5);
      expectErrorBody(await admin.call('PATCH', 'catalog/sources'), 404, 5);
    });
    it('an unknown resource', async () => {
      expectErrorBody(await admin.get('workspaces/acme/sources/nope'), 404, 5);
      expectErrorBody(await admin.get('workspaces/acme/tracking-plans/rs_nope'), 404, 5);
      expectErrorBody(await admin.get('workspaces/nope'), 404, 5);
    });
    it("a workspace out of the token's reach, as if it did not exist", async () => {
      await admin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/elsewhere' } });
      expectErrorBody(await fixture.writer.get('workspaces/elsewhere/sources'), 404, 5);
      const listed = await fixture.writer.get('workspaces');
      expect(listed.body.workspaces.map((workspace: { name: string }) => workspace.name)).toEqual(['workspaces/acme']);
    });
  });

  describe('409: conflicts', () => {
    it('code 6 for a source or destination that already exists', async () => {
      expectErrorBody(
        await admin.post('workspaces/acme/sources', { source: { name: 'workspaces/acme/sources/web', catalog_name: 'javascript' } }),
        409,
        6,
      );
      expectErrorBody(
        await admin.post('workspaces/acme/sources/web/destinations', { destination: { name: 'webhooks' } }),
        409,
        6,
      );
    });
    // Code 10 (a concurrent change) is shown in config-api-consistency.e2e-spec.ts.
  });

  it('429, code 8, with Retry-After, past the per-token rate', async () => {
    const { instance: limited, admin: limitedAdmin } = await startConfigApi({ environment: { CONFIG_API_RATE_LIMIT: '5' } });
    try {
      const answers = [];
      for (let request = 0; request < 7; request++) answers.push(await limitedAdmin.get('workspaces'));
      expect(answers.slice(0, 5).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      expectErrorBody(answers[5], 429, 8);
      const retryAfter = Number(answers[5].headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    } finally {
      await limited.stop({ removeData: true });
    }
  });

  it('501, code 12, for surfaces Tributary does not offer', async () => {
    expectErrorBody(await admin.post('workspaces/acme/functions?type=SOURCE', { function: {} }), 501, 12);
    expectErrorBody(await admin.get('workspaces/acme/regulations'), 501, 12);
    expectErrorBody(await admin.post('filters/preview', { filter: {}, input: '{}' }), 501, 12);
  });

  it('503, code 14, when the event store is gone; nothing is written', async () => {
    const { instance: broken, admin: brokenAdmin } = await startConfigApi();
    try {
      await brokenAdmin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/acme' } });
      await broken.app.get<EventStore>(EVENT_STORE).close();
      const answer = await brokenAdmin.post('workspaces/acme/sources', {
        source: { name: 'workspaces/acme/sources/web', catalog_name: 'javascript' },
      });
      expectErrorBody(answer, 503, 14);
      expect((await brokenAdmin.get('workspaces/acme/sources')).body.sources).toEqual([]);
    } finally {
      await broken.stop({ removeData: true }).catch(() => undefined);
    }
  });
  // 500, code 13 is shown in apps/config-api/src/shared/error.filter.spec.ts.
});
