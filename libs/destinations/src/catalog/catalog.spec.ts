import {
  CatalogDestinationListResponseSchema,
  CatalogDestinationSchema,
  CatalogSourceListResponseSchema,
  CatalogSourceSchema,
  CATALOG_SLUG_PATTERN,
  catalogSlugFromName,
  DESTINATION_SETTING_TYPES,
} from '@tributary/contracts';
import {
  defaultConfigFor,
  defineSetting,
  findActionsDestination,
  findCatalogDestination,
  notInCatalogReason,
  RETIRED_CATALOG_DESTINATIONS,
  findCatalogSource,
  listCatalogDestinations,
  listCatalogSources,
  missingRequiredSettings,
  toWireCatalogDestination,
  toWireCatalogSource,
  validateDestinationSettingValue,
  type CatalogDestinationDefinition,
  type DestinationSettingDefinition,
} from '@tributary/destinations';

function destination(slug: string): CatalogDestinationDefinition {
  const found = findCatalogDestination(slug);
  if (!found) throw new Error(`catalog has no destination ${slug}`);
  return found;
}

function setting(slug: string, key: string): DestinationSettingDefinition {
  const found = destination(slug).settings.find((candidate) => candidate.key === key);
  if (!found) throw new Error(`${slug} has no setting ${key}`);
  return found;
}

describe('catalog sources', () => {
  it.each([
    'javascript',
    'ios',
    'android',
    'node',
    'python',
    'ruby',
    'go',
    'java',
    'php',
    'http-api',
    'react-native',
  ])('has %s', (slug) => {
    const source = findCatalogSource(slug);
    expect(source).toBeDefined();
    expect(toWireCatalogSource(source!).name).toBe(`catalog/sources/${slug}`);
  });

  it('sends every entry in the wire shape', () => {
    for (const source of listCatalogSources()) {
      const wire = toWireCatalogSource(source);
      expect(CatalogSourceSchema.safeParse(wire).error).toBeUndefined();
      expect(Object.keys(wire).sort()).toEqual(['categories', 'description', 'display_name', 'name']);
      expect(wire.categories.length).toBeGreaterThan(0);
    }
    const listResponse = { sources: listCatalogSources().map(toWireCatalogSource), next_page_token: '' };
    expect(CatalogSourceListResponseSchema.safeParse(listResponse).success).toBe(true);
  });

  it('has well-formed, unique slugs', () => {
    const slugs = listCatalogSources().map((source) => source.slug);
    for (const slug of slugs) expect(slug).toMatch(CATALOG_SLUG_PATTERN);
    expect(new Set(slugs).size).toBe(slugs.length);
  });

  it('answers undefined for an unknown or differently spelled slug', () => {
    expect(findCatalogSource('cobol')).toBeUndefined();
    expect(findCatalogSource('JavaScript')).toBeUndefined();
    expect(findCatalogSource('catalog/sources/javascript')).toBeUndefined();
    expect(findCatalogSource('')).toBeUndefined();
  });
});

describe('catalog destinations: shape', () => {
  const all = listCatalogDestinations();

  it('has the entries clients and tests rely on', () => {
    const slugs = all.map((entry) => entry.slug);
    expect(slugs).toEqual(
      expect.arrayContaining([
        'webhooks',
        'postgres',
        'actions-google-analytics-4',
        'actions-mixpanel',
        'actions-amplitude',
      ]),
    );
  });

  it('sends every entry in the strict wire shape, internal fields left out', () => {
    for (const entry of all) {
      const wire = toWireCatalogDestination(entry);
      const parsed = CatalogDestinationSchema.safeParse(wire);
      expect({ slug: entry.slug, issues: parsed.error?.issues }).toEqual({
        slug: entry.slug,
        issues: undefined,
      });
      expect(wire.name).toBe(`catalog/destinations/${entry.slug}`);
      expect(wire.type).toBe('STREAMING');
      expect(Array.isArray(wire.categories)).toBe(false);
      const text = JSON.stringify(wire);
      for (const internalField of [
        'capabilities',
        'acceptsHistoricalTimestampsUpToMs',
        'gathering',
        'destinationFiltersApply',
        'defaultValue',
        'default_value',
      ]) {
        expect(text).not.toContain(internalField);
      }
    }
    const listResponse = { destinations: all.map(toWireCatalogDestination), next_page_token: '' };
    expect(CatalogDestinationListResponseSchema.safeParse(listResponse).success).toBe(true);
  });

  it('sends an Actions entry its actions and presets for a subscription editor, other entries none', () => {
    const amplitude = toWireCatalogDestination(destination('actions-amplitude'));
    const actionNames = amplitude.actions?.partner_actions.map((action) => action.name) ?? [];
    expect(actionNames).toEqual(expect.arrayContaining(['logEvent', 'identifyUser']));
    expect(amplitude.actions?.partner_actions.find((action) => action.name === 'logEvent')).toEqual({
      name: 'logEvent',
      display_name: 'Log Event',
      batch: false,
    });
    expect(amplitude.actions?.has_test_authentication).toBe(true);
    // The presets are exactly what the subscriptions setting defaults to.
    const subscriptions = destination('actions-amplitude').settings.find(
      (setting) => setting.key === 'subscriptions',
    );
    expect(amplitude.actions?.presets).toEqual(subscriptions?.defaultValue);
    expect(amplitude.actions?.presets.length).toBeGreaterThan(0);
    expect(toWireCatalogDestination(destination('webhooks'))).not.toHaveProperty('actions');
  });

  it('sends each setting with every validator field, zero values where unused', () => {
    const wire = toWireCatalogDestination(destination('actions-amplitude'));
    const endpoint = wire.settings.find((candidate) => candidate.name === 'endpoint');
    expect(endpoint).toEqual({
      name: 'endpoint',
      display_name: 'Endpoint Region',
      type: 'select',
      deprecated: false,
      required: false,
      string_validators: { regexp: '' },
      map_validators: {
        regexp: '',
        min: 0,
        max: 0,
        map_prefix: '',
        select_options: ['north_america', 'europe'],
      },
      settings: [],
    });
  });

  it('has well-formed, unique slugs and unique setting keys per destination', () => {
    const slugs = all.map((entry) => entry.slug);
    for (const slug of slugs) expect(slug).toMatch(CATALOG_SLUG_PATTERN);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const entry of all) {
      const keys = entry.settings.map((candidate) => candidate.key);
      expect({
        slug: entry.slug,
        duplicates: keys.filter((key, index) => keys.indexOf(key) !== index),
      }).toEqual({
        slug: entry.slug,
        duplicates: [],
      });
    }
  });

  it('gives every setting a default its own validator accepts, a compiling pattern and select options', () => {
    for (const entry of all) {
      for (const candidate of entry.settings) {
        const where = `${entry.slug}.${candidate.key}`;
        expect({ where, error: validateDestinationSettingValue(candidate, candidate.defaultValue) }).toEqual({
          where,
          error: null,
        });
        if (candidate.pattern !== undefined) expect(() => new RegExp(candidate.pattern!)).not.toThrow();
        if (candidate.type === 'select') expect(candidate.selectOptions?.length).toBeGreaterThan(0);
        else expect(candidate.selectOptions).toBeUndefined();
      }
    }
  });

  it('gives every destination sane capabilities', () => {
    for (const entry of all) {
      const maxAge = entry.capabilities.acceptsHistoricalTimestampsUpToMs;
      if (maxAge !== null) {
        expect(Number.isInteger(maxAge)).toBe(true);
        expect(maxAge).toBeGreaterThan(0);
      }
      expect(typeof entry.capabilities.destinationFiltersApply).toBe('boolean');
    }
  });

  it('is frozen, so a caller cannot change the catalog for everyone', () => {
    const webhooks = destination('webhooks');
    expect(Object.isFrozen(webhooks)).toBe(true);
    expect(Object.isFrozen(webhooks.settings)).toBe(true);
    expect(Object.isFrozen(webhooks.settings[0])).toBe(true);
    expect(Object.isFrozen(webhooks.capabilities)).toBe(true);
    expect(() => {
      (webhooks as { displayName: string }).displayName = 'Changed';
    }).toThrow(TypeError);
    expect(destination('webhooks').displayName).toBe('Webhooks');
  });

  it('answers undefined for an unknown slug', () => {
    expect(findCatalogDestination('nope')).toBeUndefined();
    expect(findCatalogDestination('Webhooks')).toBeUndefined();
    expect(findCatalogDestination('catalog/destinations/webhooks')).toBeUndefined();
  });
});

describe('catalog destinations: entries', () => {
  it('webhooks: url required string, headers map, shared_secret password', () => {
    const webhooks = destination('webhooks');
    expect(webhooks.displayName).toBe('Webhooks');
    expect(setting('webhooks', 'url')).toMatchObject({ type: 'string', required: true, defaultValue: '' });
    expect(setting('webhooks', 'headers')).toMatchObject({ type: 'map', required: false, defaultValue: {} });
    expect(setting('webhooks', 'shared_secret')).toMatchObject({ type: 'password', required: false });
    expect(webhooks.capabilities.destinationFiltersApply).toBe(true);
  });

  it("postgres: connection_string required password, schema empty by default (the source's own), no destination filters", () => {
    const postgres = destination('postgres');
    expect(postgres.displayName).toBe('PostgreSQL');
    expect(setting('postgres', 'connection_string')).toMatchObject({ type: 'password', required: true });
    expect(setting('postgres', 'schema')).toMatchObject({
      type: 'string',
      required: false,
      defaultValue: '',
    });
    expect(postgres.capabilities).toEqual({
      acceptsHistoricalTimestampsUpToMs: null,
      destinationFiltersApply: false,
    });
    expect(postgres.categories.primary).toBe('Warehouses');
  });

  it('postgres: a schema name that could break out of an identifier is refused', () => {
    const schema = setting('postgres', 'schema');
    expect(validateDestinationSettingValue(schema, 'analytics_2024')).toBeNull();
    expect(validateDestinationSettingValue(schema, 'public"; DROP TABLE x; --')).toMatch(/pattern/);
    expect(validateDestinationSettingValue(schema, '2fast')).toMatch(/pattern/);
  });

  it('postgres: a system schema is refused, public and other names are not', () => {
    const schema = setting('postgres', 'schema');
    for (const systemSchema of ['pg_catalog', 'information_schema', 'pg_toast', 'pg_temp_3', 'PG_Catalog'])
      expect(validateDestinationSettingValue(schema, systemSchema)).toMatch(
        /^setting "schema": schema ".*" is a PostgreSQL system schema/,
      );
    for (const allowed of ['public', 'analytics', 'pgx', 'information_schema_copy', ''])
      expect(validateDestinationSettingValue(schema, allowed)).toBeNull();
  });

  it('Actions entries: Segment slug and display name, keys as settings, secrets as passwords', () => {
    expect(destination('actions-amplitude').displayName).toBe('Actions Amplitude');
    expect(setting('actions-amplitude', 'apiKey')).toMatchObject({ type: 'password', required: true });
    expect(setting('actions-mixpanel', 'projectToken')).toMatchObject({ type: 'string', required: true });
    expect(setting('actions-mixpanel', 'apiSecret')).toMatchObject({ type: 'password', required: true });
    expect(setting('actions-google-analytics-4', 'apiSecret')).toMatchObject({ type: 'password' });
    // Credentials a destination declares as plain strings, or as strings of format password.
    expect(setting('actions-absmartly', 'apiKey')).toMatchObject({ type: 'password' });
    expect(setting('actions-avo-v2', 'apiKey')).toMatchObject({ type: 'password' });
    expect(setting('inleads-ai', 'apiKey')).toMatchObject({ type: 'password' });
    expect(setting('actions-ambee', 'segmentWriteKey')).toMatchObject({ type: 'password' });
    const subscriptions = setting('actions-amplitude', 'subscriptions');
    expect(subscriptions.type).toBe('mixed');
    expect(subscriptions.defaultValue).toEqual(findActionsDestination('actions-amplitude')!.presets);
    expect((subscriptions.defaultValue as unknown[]).length).toBeGreaterThan(0);
  });

  it('retired entries are gone, each naming its replacement', () => {
    for (const [retired, replacement] of Object.entries(RETIRED_CATALOG_DESTINATIONS)) {
      expect(findCatalogDestination(retired)).toBeUndefined();
      if (replacement) expect(findCatalogDestination(replacement)).toBeDefined();
    }
    expect(notInCatalogReason('amplitude')).toBe(
      '"amplitude" is no longer a catalog destination, since Tributary cannot deliver to it; use "actions-amplitude" (Actions Amplitude) instead',
    );
    expect(notInCatalogReason('nope')).toMatch(/is not a catalog destination/);
  });

  it('the catalog uses every setting type except list and color', () => {
    const used = new Set(listCatalogDestinations().flatMap((entry) => entry.settings.map((s) => s.type)));
    expect([...DESTINATION_SETTING_TYPES].filter((type) => !used.has(type))).toEqual(['list', 'color']);
  });
});

describe('validateDestinationSettingValue', () => {
  const cases: Array<{ setting: DestinationSettingDefinition; good: unknown[]; bad: unknown[] }> = [
    { setting: defineSetting('s', 'S', 'string'), good: ['', 'x'], bad: [1, true, null, undefined, [], {}] },
    { setting: defineSetting('p', 'P', 'password'), good: ['', 'secret'], bad: [42, null, ['secret']] },
    {
      setting: defineSetting('c', 'C', 'color', { pattern: '^#[0-9A-Fa-f]{6}$' }),
      good: ['', '#00ff00'],
      bad: ['green', '#0f0', 255],
    },
    {
      setting: defineSetting('sel', 'Sel', 'select', { selectOptions: ['us', 'eu'] }),
      good: ['us', 'eu'],
      bad: ['', 'US', 'asia', 1, null],
    },
    {
      setting: defineSetting('n', 'N', 'number'),
      good: [0, -1.5, 1e9],
      bad: ['1', NaN, Infinity, null, true],
    },
    { setting: defineSetting('b', 'B', 'boolean'), good: [true, false], bad: ['true', 0, 1, null] },
    {
      setting: defineSetting('l', 'L', 'list'),
      good: [[], ['a'], [1, { x: 1 }]],
      bad: ['a', {}, null, { 0: 'a' }],
    },
    {
      setting: defineSetting('m', 'M', 'map'),
      good: [{}, { 'X-Api-Key': 'abc' }],
      bad: [[], null, 'a=b', { a: 1 }, { a: 'ok', b: null }, { a: ['x'] }],
    },
    {
      setting: defineSetting('x', 'X', 'mixed'),
      good: [null, 0, '', [], {}, { a: [1] }, false],
      bad: [undefined],
    },
  ];

  it.each(cases)(
    '$setting.type accepts good values and rejects bad ones',
    ({ setting: candidate, good, bad }) => {
      for (const value of good)
        expect({ value, error: validateDestinationSettingValue(candidate, value) }).toEqual({
          value,
          error: null,
        });
      for (const value of bad)
        expect(validateDestinationSettingValue(candidate, value)).toEqual(expect.any(String));
    },
  );

  it('names the setting and both types in the message', () => {
    expect(validateDestinationSettingValue(setting('webhooks', 'url'), 42)).toBe(
      'setting "url" expects a string, got a number',
    );
    expect(validateDestinationSettingValue(setting('webhooks', 'headers'), { Authorization: 5 })).toBe(
      'setting "headers" expects a map of strings, but key "Authorization" holds a number',
    );
    expect(validateDestinationSettingValue(setting('actions-amplitude', 'endpoint'), 'mars')).toBe(
      'setting "endpoint" must be one of "north_america", "europe", got "mars"',
    );
    expect(validateDestinationSettingValue(setting('postgres', 'schema'), true)).toBe(
      'setting "schema" expects a string, got a boolean',
    );
  });

  it('keeps a rejected password out of the message', () => {
    const secret = defineSetting('secret', 'Secret', 'password', { pattern: '^sk_' });
    const error = validateDestinationSettingValue(secret, 'hunter2');
    expect(error).toMatch(/does not match/);
    expect(error).not.toContain('hunter2');
  });

  it('checks URLs with the catalog pattern but accepts loopback test servers', () => {
    const url = setting('webhooks', 'url');
    expect(validateDestinationSettingValue(url, 'http://127.0.0.1:4010/hook')).toBeNull();
    expect(validateDestinationSettingValue(url, 'https://example.com/hook')).toBeNull();
    expect(validateDestinationSettingValue(url, 'ftp://example.com/')).toMatch(/pattern/);
    expect(validateDestinationSettingValue(url, 'example.com')).toMatch(/pattern/);
  });
});

describe('defaultConfigFor', () => {
  it('lists every setting in catalog order with its default', () => {
    const defaults = defaultConfigFor('actions-amplitude')!;
    expect(defaults.map((entry) => entry.key)).toEqual(
      destination('actions-amplitude').settings.map((s) => s.key),
    );
    expect(defaults[0]).toEqual({ key: 'apiKey', displayName: 'API Key', type: 'password', value: '' });
    expect(defaults.find((entry) => entry.key === 'endpoint')?.value).toBe('north_america');
    expect(defaultConfigFor('postgres')).toEqual([
      { key: 'connection_string', displayName: 'Connection String', type: 'password', value: '' },
      { key: 'schema', displayName: 'Schema', type: 'string', value: '' },
    ]);
    expect(defaultConfigFor('mixpanel')).toBeUndefined();
  });

  it('returns copies, so changing one does not change the next', () => {
    const first = defaultConfigFor('webhooks')!;
    const headers = first.find((entry) => entry.key === 'headers')!.value as Record<string, string>;
    headers['X-Changed'] = 'yes';
    expect(defaultConfigFor('webhooks')!.find((entry) => entry.key === 'headers')!.value).toEqual({});
  });

  it('answers undefined for an unknown slug', () => {
    expect(defaultConfigFor('nope')).toBeUndefined();
  });
});

describe('missingRequiredSettings', () => {
  it('lists required settings that are absent or empty, and nothing once they are set', () => {
    const webhooks = destination('webhooks');
    expect(missingRequiredSettings(webhooks, {})).toEqual(['url']);
    expect(missingRequiredSettings(webhooks, { url: '' })).toEqual(['url']);
    expect(missingRequiredSettings(webhooks, { url: null })).toEqual(['url']);
    expect(missingRequiredSettings(webhooks, { url: 'https://example.com/hook' })).toEqual([]);
    expect(missingRequiredSettings(destination('postgres'), { schema: 'public' })).toEqual([
      'connection_string',
    ]);
  });
});

describe('catalog wire schemas (contracts)', () => {
  const good = toWireCatalogDestination(destination('webhooks'));

  it('rejects a field that is not on the wire', () => {
    expect(CatalogDestinationSchema.safeParse({ ...good, capabilities: {} }).success).toBe(false);
    const settingWithDefault = { ...good.settings[0], default_value: '' };
    expect(CatalogDestinationSchema.safeParse({ ...good, settings: [settingWithDefault] }).success).toBe(
      false,
    );
  });

  it('rejects categories as an array, a malformed name, an unknown setting type and another type', () => {
    expect(CatalogDestinationSchema.safeParse({ ...good, categories: ['Raw Data'] }).success).toBe(false);
    expect(
      CatalogDestinationSchema.safeParse({ ...good, name: 'catalog/destinations/Web Hooks' }).success,
    ).toBe(false);
    expect(CatalogDestinationSchema.safeParse({ ...good, name: 'destinations/webhooks' }).success).toBe(
      false,
    );
    expect(CatalogDestinationSchema.safeParse({ ...good, type: 'BATCH' }).success).toBe(false);
    const badSetting = { ...good.settings[0], type: 'integer' };
    expect(CatalogDestinationSchema.safeParse({ ...good, settings: [badSetting] }).success).toBe(false);
    expect(CatalogSourceSchema.safeParse({ name: 'catalog/sources/js', display_name: 'JS' }).success).toBe(
      false,
    );
    expect(
      CatalogSourceSchema.safeParse({
        name: 'catalog/destinations/js',
        display_name: 'JS',
        description: '',
        categories: [],
      }).success,
    ).toBe(false);
  });

  it('takes the slug out of a catalog name, and only out of a well-formed one', () => {
    expect(catalogSlugFromName('catalog/sources/javascript', 'sources')).toBe('javascript');
    expect(catalogSlugFromName('catalog/destinations/google-analytics', 'destinations')).toBe(
      'google-analytics',
    );
    expect(catalogSlugFromName('catalog/sources/javascript', 'destinations')).toBeUndefined();
    expect(catalogSlugFromName('catalog/sources/', 'sources')).toBeUndefined();
    expect(catalogSlugFromName('catalog/sources/a/b', 'sources')).toBeUndefined();
    expect(catalogSlugFromName('javascript', 'sources')).toBeUndefined();
  });
});
