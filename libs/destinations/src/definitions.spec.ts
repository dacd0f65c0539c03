import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listCatalogDestinations } from './catalog';
import { DESTINATION_DEFINITIONS, findDestinationDefinition } from './definitions';
import { problemWithDeliverySetting, secrecyOfSetting } from './delivery/delivery-settings';
import { listActionsDestinations } from './segment-actions/actions-catalog.entries';

describe('DESTINATION_DEFINITIONS', () => {
  it('is the catalog: one entry per definition, in order, webhooks and postgres first, then each Actions destination', () => {
    const slugs = DESTINATION_DEFINITIONS.map((definition) => definition.catalog.slug);
    expect(listCatalogDestinations().map((entry) => entry.slug)).toEqual(slugs);
    expect(slugs.slice(0, 2)).toEqual(['webhooks', 'postgres']);
    expect(slugs.slice(2)).toEqual(listActionsDestinations().map((destination) => destination.slug));
    expect(new Set(slugs).size).toBe(slugs.length);
  });

  it('finds a definition by slug, and none for a function id, a retired entry or an unknown slug', () => {
    expect(findDestinationDefinition('postgres')?.catalog.displayName).toBe('PostgreSQL');
    for (const slug of ['dfn_2a9KFGrbc3MxpUuvjC0ZQqXyQ7s', 'mixpanel', 'nope', '__proto__', 'toString'])
      expect(findDestinationDefinition(slug)).toBeUndefined();
  });

  it('declares secrets only for settings of its own catalog entry', () => {
    for (const { catalog, secrets } of DESTINATION_DEFINITIONS) {
      const keys = catalog.settings.map((setting) => setting.key);
      for (const key of Object.keys(secrets ?? {})) expect(keys).toContain(key);
    }
  });

  it('gathers only for postgres: a warehouse writes many messages in one transaction', () => {
    const gathering = DESTINATION_DEFINITIONS.filter((definition) => definition.gathering !== undefined);
    expect(gathering.map((definition) => definition.catalog.slug)).toEqual(['postgres']);
    expect(findDestinationDefinition('postgres')?.gathering).toEqual({ maxMessages: 250, callsAtOnce: 4 });
  });

  it('builds the settings checks and secrets from the definitions', () => {
    expect(secrecyOfSetting('webhooks', { key: 'url', type: 'string' })).toBe('url-credentials');
    expect(secrecyOfSetting('webhooks', { key: 'headers', type: 'map' })).toBe('map-values');
    expect(secrecyOfSetting('actions-webhook', { key: 'subscriptions', type: 'mixed' })).toBe(
      'subscription-headers',
    );
    expect(secrecyOfSetting('postgres', { key: 'schema', type: 'string' })).toBeUndefined();
    expect(secrecyOfSetting('dfn_x1', { key: 'token', type: 'password' })).toBe('whole');
    expect(secrecyOfSetting('dfn_x1', { key: 'url', type: 'string' })).toBeUndefined();
    expect(problemWithDeliverySetting('webhooks', 'headers', 'not a map')).toMatch(/map of strings/);
    expect(problemWithDeliverySetting('postgres', 'connection_string', 'postgres:///db?host=/tmp')).toMatch(
      /^setting "connection_string" /,
    );
    expect(problemWithDeliverySetting('actions-amplitude', 'subscriptions', 'x')).toMatch(
      /^setting "subscriptions" must be a list/,
    );
    expect(problemWithDeliverySetting('dfn_x1', 'tags', [1])).toMatch(/list of strings/);
    expect(problemWithDeliverySetting('webhooks', 'url', 'https://example.com')).toBeNull();
    expect(problemWithDeliverySetting('nope', 'headers', 'x')).toBeNull();
  });
});

describe('catalog/', () => {
  it('imports no adapter and nothing of delivery/: it reads the definitions and the generated Actions data', () => {
    const folder = join(__dirname, 'catalog');
    const imports = readdirSync(folder)
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))
      .flatMap((name) =>
        [...readFileSync(join(folder, name), 'utf8').matchAll(/\bfrom '(\.{1,2}\/[^']+)'/g)].map(
          (match) => `${name}: ${match[1]}`,
        ),
      );
    expect(imports.filter((entry) => /adapter|\/delivery\//.test(entry))).toEqual([]);
    expect(imports.filter((entry) => entry.includes(': ../')).sort()).toEqual([
      'catalog.lookups.ts: ../definitions',
      'catalog.wire.ts: ../segment-actions/actions-catalog.entries',
      'catalog.wire.ts: ../segment-actions/actions-catalog.types',
    ]);
  });
});
