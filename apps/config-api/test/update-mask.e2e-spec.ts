// Update masks (docs/config-api.md §1.6) over HTTP, on every resource that takes them, in the forms clients send.
import { SecretBox, secretPlace } from '@tributary/auth';
import { destinationSecretsOwner } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
} from '../../../test/support/config-api.client';
import { eventStoreOf, readAllEvents, RFC3339_SECONDS } from './support/config-api-e2e.kit';

const ws = 'masks';
const source = `workspaces/${ws}/sources/js`;

/** Config entries of a destination response by setting key. */
function configByKey(destination: { config: { name: string; value: unknown; type: string }[] }) {
  return Object.fromEntries(destination.config.map((entry) => [entry.name.split('/').pop()!, entry]));
}

describe('update masks (docs/config-api.md §1.6)', () => {
  let instance: TributaryTestInstance;
  let writer: ConfigApiClient;

  beforeAll(async () => {
    instance = await startTributary();
    ({ writer } = await createWorkspaceWithTokens(new ConfigApiClient(instance), ws));
    await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: source, catalog_name: 'catalog/sources/javascript' },
    });
    // A forwarding target must be another source of the workspace (docs/protocols.md R18).
    await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/violations`, catalog_name: 'catalog/sources/javascript' },
    });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  describe('destinations', () => {
    const destination = `${source}/destinations/actions-posthog`;

    beforeAll(async () => {
      await writer.ok('POST', `${source}/destinations`, {
        destination: {
          name: destination,
          config: [
            { name: `${destination}/config/project_id`, value: 'UA-970334309-1', type: 'string' },
            { name: `${destination}/config/api_key`, value: 'phc_key', type: 'password' },
            { name: `${destination}/config/endpoint`, value: 'https://eu.i.posthog.com', type: 'select' },
          ],
        },
      });
    });

    it('sets enabled to false when the mask names it and the body leaves it out, as C1 sends it', async () => {
      const enabled = await writer.ok('PATCH', destination, {
        destination: { enabled: true },
        update_mask: { paths: ['destination.enabled'] },
      });
      expect(enabled.enabled).toBe(true);
      // C1 marshals with omitempty: `enabled: false` is absent while the path is masked.
      const disabled = expectJsonSuccess(
        await writer.patch(destination, {
          destination: { name: destination, create_time: '0001-01-01T00:00:00Z' },
          update_mask: { paths: ['destination.enabled'] },
        }),
      );
      expect(disabled.enabled).toBe(false);
      expect((await writer.get(destination)).body.enabled).toBe(false);
    });

    it('merges config by entry name: settings not named keep their values', async () => {
      const patched = await writer.ok('PATCH', destination, {
        destination: {
          config: [{ name: `${destination}/config/geoip_disable`, value: true, type: 'boolean' }],
        },
        update_mask: { paths: ['destination.config'] },
      });
      const config = configByKey(patched);
      expect(config.geoip_disable.value).toBe(true);
      expect(config.project_id.value).toBe('UA-970334309-1');
      expect(config.endpoint.value).toBe('https://eu.i.posthog.com');
      // Every catalog setting is still listed.
      expect(Object.keys(config)).toEqual(
        expect.arrayContaining(['endpoint', 'geoip_disable', 'subscriptions']),
      );
    });

    it('ignores a field in the body that the mask does not name', async () => {
      const patched = await writer.ok('PATCH', destination, {
        destination: {
          enabled: true,
          connection_mode: 'DEVICE',
          config: [{ name: `${destination}/config/historical_migration`, value: true, type: 'boolean' }],
        },
        update_mask: { paths: ['destination.config'] },
      });
      expect(patched.enabled).toBe(false);
      expect(patched.connection_mode).toBe('CLOUD');
      expect(configByKey(patched).historical_migration.value).toBe(true);
    });

    it('takes paths without the resource prefix too', async () => {
      const patched = await writer.ok('PATCH', destination, {
        destination: { connection_mode: 'device' },
        update_mask: { paths: ['connection_mode'] },
      });
      expect(patched.connection_mode).toBe('DEVICE');
      const back = await writer.ok('PATCH', destination, {
        destination: { connection_mode: 'CLOUD' },
        update_mask: { paths: ['destination.connection_mode'] },
      });
      expect(back.connection_mode).toBe('CLOUD');
    });

    it('treats a PATCH without update_mask as masking the fields present', async () => {
      const patched = await writer.ok('PATCH', destination, { destination: { enabled: true } });
      expect(patched.enabled).toBe(true);
      expect(patched.connection_mode).toBe('CLOUD');
      expect(configByKey(patched).project_id.value).toBe('UA-970334309-1');
      expect(configByKey(patched).geoip_disable.value).toBe(true);
      const unchanged = await writer.ok('PATCH', destination, {
        destination: { config: [{ name: 'historical_migration', value: true }] },
      });
      expect(unchanged.enabled).toBe(true);
      expect(configByKey(unchanged).historical_migration.value).toBe(true);
    });

    it('accepts PUT like PATCH', async () => {
      const put = await writer.ok('PUT', destination, {
        destination: {},
        update_mask: { paths: ['destination.enabled'] },
      });
      expect(put.enabled).toBe(false);
    });

    it('refuses to enable a destination whose required setting the mask would clear', async () => {
      const response = await writer.patch(destination, {
        destination: { enabled: true, config: [{ name: 'project_id', value: '' }] },
        update_mask: { paths: ['destination.enabled', 'destination.config'] },
      });
      expectConfigApiError(response, 400, 3);
      expect(configByKey((await writer.get(destination)).body).project_id.value).toBe('UA-970334309-1');
    });
  });

  describe('schema config', () => {
    const schemaConfig = `${source}/schema-config`;
    const C1_PATHS = [
      'schema_config.allow_unplanned_track_events',
      'schema_config.allow_unplanned_identify_traits',
      'schema_config.allow_unplanned_group_traits',
      'schema_config.forwarding_blocked_events_to',
      'schema_config.allow_unplanned_track_event_properties',
      'schema_config.allow_track_event_on_violations',
      'schema_config.allow_identify_traits_on_violations',
      'schema_config.allow_group_traits_on_violations',
      'schema_config.forwarding_violations_to',
      'schema_config.allow_track_properties_on_violations',
      'schema_config.common_track_event_on_violations',
      'schema_config.common_identify_event_on_violations',
      'schema_config.common_group_event_on_violations',
    ];

    it('starts permissive', async () => {
      const body = expectJsonSuccess(await writer.get(schemaConfig));
      expect(body).toMatchObject({ name: schemaConfig, parent: source, allow_unplanned_track_events: true });
    });

    it("applies C1's 13 paths with the false values left out of the body", async () => {
      const patched = await writer.ok('PATCH', schemaConfig, {
        schema_config: {
          name: schemaConfig,
          allow_unplanned_identify_traits: true,
          allow_group_traits_on_violations: true,
          forwarding_violations_to: 'violations',
          common_track_event_on_violations: 'BLOCK',
          common_group_event_on_violations: 'OMIT_TRAITS',
        },
        update_mask: { paths: C1_PATHS },
      });
      expect(patched).toEqual({
        name: schemaConfig,
        parent: source,
        allow_unplanned_track_events: false,
        allow_unplanned_identify_traits: true,
        allow_unplanned_group_traits: false,
        forwarding_blocked_events_to: '',
        allow_unplanned_track_event_properties: false,
        allow_track_event_on_violations: false,
        allow_identify_traits_on_violations: false,
        allow_group_traits_on_violations: true,
        forwarding_violations_to: 'violations',
        allow_track_properties_on_violations: false,
        common_track_event_on_violations: 'BLOCK',
        common_identify_event_on_violations: 'ALLOW',
        common_group_event_on_violations: 'OMIT_TRAITS',
      });
      expect((await writer.get(schemaConfig)).body).toEqual(patched);
    });

    it('changes only the masked field and ignores the rest of the body', async () => {
      const patched = await writer.ok('PATCH', schemaConfig, {
        schema_config: { allow_unplanned_track_events: true, allow_unplanned_group_traits: true },
        update_mask: { paths: ['schema_config.allow_unplanned_track_events'] },
      });
      expect(patched.allow_unplanned_track_events).toBe(true);
      expect(patched.allow_unplanned_group_traits).toBe(false);
      expect(patched.common_track_event_on_violations).toBe('BLOCK');
    });

    it('answers a value of the wrong kind with 400', async () => {
      const response = await writer.patch(schemaConfig, {
        schema_config: { common_track_event_on_violations: 'OMIT_TRAITS' },
        update_mask: { paths: ['schema_config.common_track_event_on_violations'] },
      });
      expectConfigApiError(response, 400, 3);
    });
  });

  describe('filters', () => {
    const destination = `${source}/destinations/actions-mixpanel`;
    let filterName: string;

    beforeAll(async () => {
      await writer.ok('POST', `${source}/destinations`, {
        destination: { name: destination, config: [{ name: 'projectToken', value: 'mp-token' }] },
      });
      const created = await writer.ok('POST', `${destination}/filters`, {
        filter: {
          title: 'Drop pages',
          description: 'no page calls',
          if: "type = 'page'",
          enabled: true,
          actions: [{ type: 'drop_event' }],
        },
        // C1 sends a mask on create too; it is ignored there.
        update_mask: { paths: ['title'] },
      });
      filterName = created.name;
    });

    it('applies the bare paths C1 sends: masked-but-absent fields take their zero values', async () => {
      const patched = expectJsonSuccess(
        await writer.patch(filterName, {
          filter: { title: 'Drop screens', if: "type = 'screen'", actions: [{ type: 'drop_event' }] },
          update_mask: { paths: ['if', 'actions', 'title', 'description', 'enabled'] },
        }),
      );
      expect(patched).toEqual({
        name: filterName,
        title: 'Drop screens',
        description: '',
        if: "type = 'screen'",
        enabled: false,
        actions: [{ type: 'drop_event' }],
      });
    });

    it('applies prefixed paths, and leaves unmasked fields alone', async () => {
      const patched = await writer.ok('PATCH', filterName, {
        filter: { enabled: true, description: 'ignored', title: 'ignored too' },
        update_mask: { paths: ['filter.enabled'] },
      });
      expect(patched).toMatchObject({ title: 'Drop screens', description: '', enabled: true });
    });

    it('treats a PATCH without a mask as masking the fields present', async () => {
      const patched = await writer.ok('PATCH', filterName, {
        filter: { actions: [{ type: 'sample_event', percent: 0.5, path: 'userId' }] },
      });
      expect(patched).toMatchObject({
        title: 'Drop screens',
        enabled: true,
        actions: [{ type: 'sample_event', percent: 0.5, path: 'userId' }],
      });
      expect((await writer.get(filterName)).body).toEqual(patched);
    });

    it('answers a mask that would clear the condition with 400', async () => {
      const response = await writer.patch(filterName, { filter: {}, update_mask: { paths: ['if'] } });
      expectConfigApiError(response, 400, 3);
      expect((await writer.get(filterName)).body.if).toBe("type = 'screen'");
    });
  });

  describe('tracking plans', () => {
    let planName: string;
    const event = (name: string) => ({
      name,
      description: `${name} happened`,
      version: 1,
      rules: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { properties: { type: 'object', properties: {}, required: [] } },
      },
    });
    const identifyTrait = { key: 'email', type: 'string' };
    const globalSchema = {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: {},
    };

    beforeEach(async () => {
      const created = await writer.ok('POST', `workspaces/${ws}/tracking-plans`, {
        tracking_plan: {
          display_name: 'Masked plan',
          rules: { events: [event('Signed Up')], identify_traits: [identifyTrait], global: globalSchema },
        },
      });
      planName = created.name;
    });

    it.each(['PUT', 'PATCH'] as const)(
      '%s replaces the rules wholesale under tracking_plan.rules',
      async (method) => {
        const updated = expectJsonSuccess(
          await writer.request(method, planName, {
            json: {
              tracking_plan: { display_name: 'Renamed', rules: { events: [event('Logged In')] } },
              update_mask: { paths: ['tracking_plan.display_name', 'tracking_plan.rules'] },
            },
          }),
        );
        expect(updated.display_name).toBe('Renamed');
        expect(updated.rules).toEqual({
          events: [event('Logged In')],
          identify_traits: [],
          group_traits: [],
        });
        expect(updated.update_time).toMatch(RFC3339_SECONDS);
        expect((await writer.get(planName)).body).toEqual(updated);
      },
    );

    it('replaces one part under tracking_plan.rules.events and keeps the others', async () => {
      const updated = await writer.ok('PUT', planName, {
        tracking_plan: {
          display_name: 'not masked, so ignored',
          rules: { events: [event('Order Completed')], identify_traits: [{ key: 'ignored' }] },
        },
        update_mask: { paths: ['tracking_plan.rules.events'] },
      });
      expect(updated.display_name).toBe('Masked plan');
      expect(updated.rules).toEqual({
        events: [event('Order Completed')],
        identify_traits: [identifyTrait],
        group_traits: [],
        global: globalSchema,
      });
    });

    it('replaces rules.global and rules.identify, and removes a masked-but-absent schema part', async () => {
      const identifySchema = { type: 'object', properties: { traits: { type: 'object' } } };
      const updated = await writer.ok('PATCH', planName, {
        tracking_plan: { rules: { identify: identifySchema } },
        update_mask: { paths: ['tracking_plan.rules.identify', 'tracking_plan.rules.global'] },
      });
      expect(updated.rules).toEqual({
        events: [event('Signed Up')],
        identify_traits: [identifyTrait],
        group_traits: [],
        identify: identifySchema,
      });
    });

    it('empties a masked-but-absent list part', async () => {
      const updated = await writer.ok('PUT', planName, {
        tracking_plan: {},
        update_mask: { paths: ['tracking_plan.rules.identify_traits', 'tracking_plan.rules.group'] },
      });
      expect(updated.rules.identify_traits).toEqual([]);
      expect(updated.rules.events).toEqual([event('Signed Up')]);
    });

    it('treats an update without a mask as masking the fields present', async () => {
      const renamed = await writer.ok('PUT', planName, { tracking_plan: { display_name: 'Only the name' } });
      expect(renamed.display_name).toBe('Only the name');
      expect(renamed.rules.events).toEqual([event('Signed Up')]);
    });

    it('answers a masked-but-absent display name with 400: a plan needs a name', async () => {
      const response = await writer.put(planName, {
        tracking_plan: { rules: {} },
        update_mask: { paths: ['tracking_plan.display_name'] },
      });
      expectConfigApiError(response, 400, 3);
    });
  });

  describe('password settings', () => {
    const destination = `${source}/destinations/actions-amplitude`;
    const plaintext = 'sk_live_VeryS3cretWriteKey_do-not-leak';

    it('masks the secret in responses, keeps it when the mask is sent back, and never stores it in plaintext', async () => {
      const created = await writer.ok('POST', `${source}/destinations`, {
        destination: {
          name: destination,
          config: [
            { name: 'apiKey', value: plaintext, type: 'password' },
            { name: 'secretKey', value: 'amplitude-secret-key', type: 'password' },
          ],
        },
      });
      expect(configByKey(created).apiKey).toMatchObject({ value: MASKED_SECRET, type: 'password' });
      expect(JSON.stringify(created)).not.toContain(plaintext);

      const storedValue = async () => {
        const events = await readAllEvents(eventStoreOf(instance));
        const values = events
          .filter((event) => event.type === 'DestinationCreated' || event.type === 'DestinationUpdated')
          .filter((event) => event.data.destinationSlug === 'actions-amplitude')
          .map((event) =>
            event.type === 'DestinationCreated'
              ? (event.data.config as Record<string, unknown>).apiKey
              : ((event.data.changes as { config?: Record<string, unknown> }).config ?? {}).apiKey,
          )
          .filter((value) => value !== undefined);
        const created = events.find(
          (event) =>
            event.type === 'DestinationCreated' && event.data.destinationSlug === 'actions-amplitude',
        );
        // Each secret opens only where it is kept: its destination and setting.
        const place = secretPlace(
          destinationSecretsOwner(created!.data as { sourceId: string; destinationSlug: string }),
          'apiKey',
        );
        return { events, latest: values[values.length - 1] as string, place };
      };
      const afterCreate = await storedValue();
      expect(afterCreate.latest).toMatch(/^enc:v1:/);
      expect(instance.app.get(SecretBox).decrypt(afterCreate.latest, afterCreate.place)).toBe(plaintext);

      // A client reads the destination and writes it back unchanged, mask included.
      const echoed = await writer.ok('PATCH', destination, {
        destination: { enabled: true, config: created.config },
        update_mask: { paths: ['destination.enabled', 'destination.config'] },
      });
      expect(echoed.enabled).toBe(true);
      expect(configByKey(echoed).apiKey.value).toBe(MASKED_SECRET);
      const afterEcho = await storedValue();
      expect(afterEcho.latest).toBe(afterCreate.latest);

      const everything = JSON.stringify(afterEcho.events, (_key, value) =>
        typeof value === 'bigint' ? value.toString() : value,
      );
      expect(everything).not.toContain(plaintext);

      const audit = await writer.ok(
        'GET',
        `workspaces/${ws}/audit-events?resource_name_prefix=${destination}`,
      );
      expect(audit.audit_events.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(audit)).not.toContain(plaintext);
      expect(JSON.stringify(audit)).not.toContain('enc:v1:');

      // A new value replaces the secret.
      await writer.ok('PATCH', destination, {
        destination: { config: [{ name: 'apiKey', value: 'rotated-secret' }] },
        update_mask: { paths: ['destination.config'] },
      });
      const afterRotation = await storedValue();
      expect(instance.app.get(SecretBox).decrypt(afterRotation.latest, afterRotation.place)).toBe(
        'rotated-secret',
      );
    });
  });
});
