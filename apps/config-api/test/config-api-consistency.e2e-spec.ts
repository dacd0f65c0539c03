import { SecretBox } from '@tributary/auth';
import { ConfigReadModel } from '@tributary/config-projections';
import type { TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { ConfigApiClient, createFixture, startConfigApi } from './config-api-e2e.kit';

describe('Config API consistency', () => {
  describe('concurrent writes', () => {
    let instance: TributaryTestInstance;
    let admin: ConfigApiClient;
    let fixture: Awaited<ReturnType<typeof createFixture>>;

    beforeAll(async () => {
      ({ instance, admin } = await startConfigApi());
      fixture = await createFixture(admin);
    });
    afterAll(() => instance.stop({ removeData: true }));

    it('parallel conflicting updates lose nothing: each answers 200 or 409 code 10, and every 200 is kept', async () => {
      const values = Array.from({ length: 20 }, (_, index) => `https://example.com/hook-${index}`);
      const answers = await Promise.all(
        values.map((url, index) =>
          admin.patch(fixture.destinationPath, {
            destination: { config: [{ name: 'url', value: url }], enabled: index % 2 === 0 },
            update_mask: { paths: ['destination.config', 'destination.enabled'] },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
      for (const refused of answers.filter((answer) => answer.status === 409)) expect(refused.body.code).toBe(10);
      const succeeded = answers.filter((answer) => answer.status === 200);
      expect(succeeded.length).toBeGreaterThanOrEqual(1);

      // The audit trail holds exactly one change per 200, and the final state is the last of them.
      const trail = await admin.ok(
        'GET',
        `workspaces/acme/audit-events?page_size=1000&resource_name_prefix=${encodeURIComponent(fixture.destinationPath)}`,
      );
      const updates = trail.audit_events.filter((entry: { type: string }) => entry.type === 'DestinationUpdated');
      expect(updates).toHaveLength(succeeded.length);
      const lastUpdate = updates[0].data.changes;
      const final = await admin.ok('GET', fixture.destinationPath);
      expect(final.config.find((entry: { name: string }) => entry.name.endsWith('/url')).value).toBe(lastUpdate.config.url);
      expect(final.enabled).toBe(lastUpdate.enabled);
    });

    it('parallel creates of one source: exactly one wins, the others get 409', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          admin.post('workspaces/acme/sources', {
            source: { name: 'workspaces/acme/sources/race', catalog_name: 'javascript' },
          }),
        ),
      );
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
      for (const refused of answers.filter((answer) => answer.status !== 200)) {
        expect(refused.status).toBe(409);
        expect([6, 10]).toContain(refused.body.code);
      }
      const sources = await admin.ok('GET', 'workspaces/acme/sources');
      expect(sources.sources.filter((source: { name: string }) => source.name.endsWith('/race'))).toHaveLength(1);
    });

    it('a read right after a successful write sees it', async () => {
      for (let round = 0; round < 25; round++) {
        const name = `workspaces/acme/sources/rw-${round}`;
        await admin.ok('POST', 'workspaces/acme/sources', { source: { name, catalog_name: 'javascript' } });
        expect((await admin.get(name)).status).toBe(200);
        await admin.ok('DELETE', name);
        expect((await admin.get(name)).status).toBe(404);
      }
    });
  });

  it('a restart keeps every resource, token, secret and the audit trail', async () => {
    const first = await startConfigApi();
    const fixture = await createFixture(first.admin);
    const filter = await first.admin.ok('POST', `${fixture.destinationPath}/filters`, {
      filter: { title: 'drop', if: "event = 'x'", actions: [{ type: 'drop_event' }], enabled: true },
    });
    const plan = await first.admin.ok('POST', 'workspaces/acme/tracking-plans', {
      tracking_plan: { display_name: 'Plan', rules: { events: [{ name: 'A', version: 1, rules: {} }] } },
    });
    await first.admin.ok('POST', `${plan.name}/source-connections`, { source_name: 'workspaces/acme/sources/web' });
    await first.admin.ok('PATCH', 'workspaces/acme/sources/web/schema-config', {
      schema_config: { allow_unplanned_track_events: false },
      update_mask: { paths: ['schema_config.allow_unplanned_track_events'] },
    });
    const snapshot = async (admin: ConfigApiClient) => ({
      workspaces: await admin.ok('GET', 'workspaces'),
      sources: await admin.ok('GET', 'workspaces/acme/sources'),
      schemaConfig: await admin.ok('GET', 'workspaces/acme/sources/web/schema-config'),
      destination: await admin.ok('GET', fixture.destinationPath),
      filters: await admin.ok('GET', `${fixture.destinationPath}/filters`),
      plans: await admin.ok('GET', 'workspaces/acme/tracking-plans'),
      connections: await admin.ok('GET', `${plan.name}/source-connections`),
      tokens: await admin.ok('GET', 'access-tokens'),
      audit: await admin.ok('GET', 'workspaces/acme/audit-events?page_size=1000'),
    });
    const before = await snapshot(first.admin);
    await first.instance.stop();

    const second = await startConfigApi({ dataDir: first.instance.dataDir, adminToken: first.instance.adminToken });
    try {
      expect(await snapshot(second.admin)).toEqual(before);
      expect(before.filters.filters[0].name).toBe(filter.name);
      // The workspace token minted before the restart still works.
      expect((await second.admin.withToken(fixture.writer.token).get('workspaces/acme/sources')).status).toBe(200);
      // The secret still decrypts with the deployment key, and sending its mask back keeps it.
      const current = await second.admin.ok('GET', fixture.destinationPath);
      await second.admin.ok('PATCH', fixture.destinationPath, { destination: { config: current.config } });
      const readModel = second.instance.app.get(ConfigReadModel);
      const stored = readModel.destination(fixture.source.id, 'webhooks')!.destination.config;
      expect(second.instance.app.get(SecretBox).revealAll(stored).shared_secret).toBe('first-secret');
      // And the write-key projection was rebuilt.
      expect(readModel.sourceByWriteKey(fixture.source.write_keys[0])?.sourceSlug).toBe('web');
    } finally {
      await second.instance.stop({ removeData: true });
    }
  });

  describe('bootstrap', () => {
    it('TRIBUTARY_BOOTSTRAP_TOKEN is idempotent across restarts', async () => {
      const first = await startConfigApi();
      await first.instance.stop();
      const second = await startConfigApi({ dataDir: first.instance.dataDir, adminToken: first.instance.adminToken });
      try {
        const readModel = second.instance.app.get(ConfigReadModel);
        const adminTokens = [...readModel.tokensByNumber.values()].filter((token) => token.instanceAdmin);
        expect(adminTokens).toHaveLength(1);
        expect((await second.admin.get('workspaces')).status).toBe(200);
      } finally {
        await second.instance.stop({ removeData: true });
      }
    });

    it('with no bootstrap setting, a fresh store prints one generated admin token, and a restart none', async () => {
      const printed: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any, ...rest: any[]) => {
        printed.push(String(chunk));
        return write(chunk, ...rest);
      });
      try {
        const first = await startConfigApi({ environment: { TRIBUTARY_BOOTSTRAP_TOKEN: '' } });
        const token = /\n {2}([A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43})\n/.exec(printed.join(''))?.[1];
        expect(token).toBeDefined();
        expect((await first.admin.withToken(token!).get('workspaces')).status).toBe(200);
        await first.instance.stop();
        printed.length = 0;
        const second = await startConfigApi({ dataDir: first.instance.dataDir, environment: { TRIBUTARY_BOOTSTRAP_TOKEN: '' } });
        expect(printed.join('')).not.toMatch(/instance-admin token/);
        expect((await second.admin.withToken(token!).get('workspaces')).status).toBe(200);
        await second.instance.stop({ removeData: true });
      } finally {
        spy.mockRestore();
      }
    });

    it('TRIBUTARY_ADMIN_EMAIL and PASSWORD create a user who manages tokens with Basic auth', async () => {
      const { instance, admin } = await startConfigApi({
        environment: { TRIBUTARY_ADMIN_EMAIL: 'Ops@Example.com', TRIBUTARY_ADMIN_PASSWORD: 'correct horse' },
      });
      try {
        await admin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/acme' } });
        const basic = (password: string) => ({
          authorization: `Basic ${Buffer.from(`ops@example.com:${password}`).toString('base64')}`,
        });
        const anonymous = admin.withToken('');
        const created = await anonymous.post(
          'access-tokens',
          { access_token: { description: 'ci', scopes: 'workspace', workspace_names: ['workspaces/acme'] } },
          basic('correct horse'),
        );
        expect(created.status).toBe(200);
        expect(created.body).toMatchObject({ scopes: 'workspace', workspace_names: ['workspaces/acme'] });
        expect(created.body.token).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
        const listed = await anonymous.get('access-tokens', basic('correct horse'));
        expect(listed.body.access_tokens.map((token: { name: string }) => token.name)).toContain(created.body.name);
        expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
        expect((await anonymous.get('access-tokens', basic('wrong'))).status).toBe(401);
      } finally {
        await instance.stop({ removeData: true });
      }
    });
  });
});
