import { EVENT_STORE, EventStore, RecordedEvent } from '@tributary/event-store';
import type { TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { ConfigApiClient, createFixture, startConfigApi } from './config-api-e2e.kit';

/** The update-mask rules of spec §1.6, each over HTTP, on every resource that has an update. */
describe('Config API update masks', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let fixture: Awaited<ReturnType<typeof createFixture>>;
  const setting = (destination: any, key: string) =>
    destination.config.find((entry: { name: string }) => entry.name.endsWith(`/config/${key}`))?.value;

  beforeAll(async () => {
    ({ instance, admin } = await startConfigApi());
    fixture = await createFixture(admin);
  });
  afterAll(() => instance.stop({ removeData: true }));

  describe('destinations', () => {
    it('in the mask and in the body: set', async () => {
      const updated = await admin.ok('PATCH', fixture.destinationPath, {
        destination: { enabled: true },
        update_mask: { paths: ['destination.enabled'] },
      });
      expect(updated.enabled).toBe(true);
    });

    it('in the mask, absent from the body: the zero value (C1 leaves enabled:false out)', async () => {
      const updated = await admin.ok('PATCH', fixture.destinationPath, {
        destination: {},
        update_mask: { paths: ['destination.enabled'] },
      });
      expect(updated.enabled).toBe(false);
    });

    it('in the body, not in the mask: ignored', async () => {
      const updated = await admin.ok('PATCH', fixture.destinationPath, {
        destination: { enabled: true, connection_mode: 'DEVICE' },
        update_mask: { paths: ['destination.connection_mode'] },
      });
      expect(updated).toMatchObject({ enabled: false, connection_mode: 'DEVICE' });
    });

    it('config merges by entry name: the others keep their values', async () => {
      const updated = await admin.ok('PATCH', fixture.destinationPath, {
        destination: { config: [{ name: `${fixture.destinationPath}/config/headers`, value: { 'x-team': 'data' } }] },
        update_mask: { paths: ['destination.config'] },
      });
      expect(setting(updated, 'headers')).toEqual({ 'x-team': 'data' });
      expect(setting(updated, 'url')).toBe('https://example.com/hook');
      expect(setting(updated, 'shared_secret')).toBe('********');
    });

    it('without a mask, the fields present in the body', async () => {
      const updated = await admin.ok('PATCH', fixture.destinationPath, { destination: { connection_mode: 'cloud' } });
      expect(updated).toMatchObject({ connection_mode: 'CLOUD', enabled: false });
    });

    it('a secret is masked, stored encrypted, and kept when the mask is sent back', async () => {
      const current = await admin.ok('GET', fixture.destinationPath);
      await admin.ok('PATCH', fixture.destinationPath, { destination: { config: current.config } });
      await admin.ok('PATCH', fixture.destinationPath, {
        destination: { config: [{ name: 'shared_secret', value: 'second-secret' }] },
      });
      const stored = await readAllEvents(instance);
      const everything = JSON.stringify(stored.map((event) => event.data));
      expect(everything).not.toContain('first-secret');
      expect(everything).not.toContain('second-secret');
      const secretChanges = stored
        .filter((event) => event.type === 'DestinationUpdated')
        .map((event) => (event.data as any).changes.config?.shared_secret)
        .filter(Boolean);
      // Sending the mask back changed nothing; the real change is stored as ciphertext.
      expect(secretChanges).toHaveLength(1);
      expect(secretChanges[0]).toMatch(/^enc:v1:/);
    });
  });

  describe('schema config', () => {
    const allPaths = [
      'allow_unplanned_track_events',
      'allow_unplanned_identify_traits',
      'allow_unplanned_group_traits',
      'forwarding_blocked_events_to',
      'allow_unplanned_track_event_properties',
      'allow_track_event_on_violations',
      'allow_identify_traits_on_violations',
      'allow_group_traits_on_violations',
      'forwarding_violations_to',
      'allow_track_properties_on_violations',
      'common_track_event_on_violations',
      'common_identify_event_on_violations',
      'common_group_event_on_violations',
    ].map((field) => `schema_config.${field}`);

    it("C1's PATCH: all 13 paths masked, false values left out of the body", async () => {
      const updated = await admin.ok('PATCH', 'workspaces/acme/sources/web/schema-config', {
        schema_config: { allow_unplanned_track_events: true, common_track_event_on_violations: 'BLOCK' },
        update_mask: { paths: allPaths },
      });
      expect(updated).toMatchObject({
        name: 'workspaces/acme/sources/web/schema-config',
        allow_unplanned_track_events: true,
        allow_unplanned_identify_traits: false,
        allow_track_event_on_violations: false,
        forwarding_violations_to: '',
        common_track_event_on_violations: 'BLOCK',
        common_identify_event_on_violations: 'ALLOW',
      });
    });

    it('a narrow mask leaves the other fields as they were', async () => {
      const updated = await admin.ok('PATCH', 'workspaces/acme/sources/web/schema-config', {
        schema_config: { allow_unplanned_identify_traits: true, allow_unplanned_group_traits: true },
        update_mask: { paths: ['schema_config.allow_unplanned_identify_traits'] },
      });
      expect(updated).toMatchObject({
        allow_unplanned_identify_traits: true,
        allow_unplanned_group_traits: false,
        common_track_event_on_violations: 'BLOCK',
      });
    });
  });

  describe('filters', () => {
    let filterName: string;
    beforeAll(async () => {
      const filter = await admin.ok('POST', `${fixture.destinationPath}/filters`, {
        filter: { title: 'Drop tests', if: "event = 'Test'", actions: [{ type: 'drop_event' }], enabled: true },
        update_mask: { paths: ['if'] },
      });
      filterName = filter.name;
      expect(filterName).toMatch(/\/filters\/df_[0-9A-Za-z]{27}$/);
    });

    it('bare paths, as C1 sends them', async () => {
      const updated = await admin.ok('PATCH', filterName, {
        filter: { title: 'Renamed', description: 'ignored' },
        update_mask: { paths: ['title', 'enabled'] },
      });
      expect(updated).toMatchObject({ title: 'Renamed', description: '', enabled: false, if: "event = 'Test'" });
    });

    it('prefixed paths work the same', async () => {
      const updated = await admin.ok('PATCH', filterName, {
        filter: { enabled: true, if: "type = 'track'" },
        update_mask: { paths: ['filter.enabled', 'filter.if'] },
      });
      expect(updated).toMatchObject({ title: 'Renamed', enabled: true, if: "type = 'track'" });
    });
  });

  describe('tracking plans', () => {
    let planName: string;
    const event = (name: string) => ({ name, description: '', version: 1, rules: { type: 'object' } });

    beforeAll(async () => {
      const plan = await admin.ok('POST', 'workspaces/acme/tracking-plans', {
        tracking_plan: {
          display_name: 'Web',
          rules: { events: [event('A'), event('B')], global: { type: 'object' }, identify_traits: null },
        },
      });
      planName = plan.name;
    });

    it('PUT with tracking_plan.rules replaces the rules wholesale', async () => {
      const updated = await admin.ok('PUT', planName, {
        tracking_plan: { display_name: 'ignored', rules: { events: [event('C')] } },
        update_mask: { paths: ['tracking_plan.rules'] },
      });
      expect(updated.display_name).toBe('Web');
      expect(updated.rules).toEqual({ events: [event('C')], identify_traits: [], group_traits: [] });
    });

    it('a narrow rules path replaces one part; PATCH works as PUT', async () => {
      await admin.ok('PUT', planName, {
        tracking_plan: { rules: { global: { type: 'object', required: ['context'] } } },
        update_mask: { paths: ['tracking_plan.rules.global'] },
      });
      const updated = await admin.ok('PATCH', planName, {
        tracking_plan: { rules: { events: [event('D')] } },
        update_mask: { paths: ['tracking_plan.rules.events'] },
      });
      expect(updated.rules.events).toEqual([event('D')]);
      expect(updated.rules.global).toEqual({ type: 'object', required: ['context'] });
    });

    it('a masked display name absent from the body would empty it: refused', async () => {
      const answer = await admin.put(planName, { tracking_plan: {}, update_mask: { paths: ['tracking_plan.display_name'] } });
      expect(answer.status).toBe(400);
    });
  });
});

async function readAllEvents(instance: TributaryTestInstance): Promise<RecordedEvent[]> {
  const store = instance.app.get<EventStore>(EVENT_STORE);
  const events: RecordedEvent[] = [];
  await new Promise<void>((resolve, reject) => {
    const subscription = store.subscribeToAll((event) => void events.push(event), {
      onCaughtUp: () => void subscription.stop().then(resolve),
      onError: reject,
    });
  });
  return events;
}
