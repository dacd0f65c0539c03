/**
 * Fixtures for running Segment Actions destinations in tests: settings that satisfy each catalog
 * entry's settings schema (secrets recognisable so they can be redacted), and one message of each type.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import type { ActionsDestinationData, ActionsSettingData } from '@tributary/destinations';

export function fixtureSettingValue(
  destination: ActionsDestinationData,
  setting: ActionsSettingData,
): unknown {
  if (setting.type === 'password') return `secret-${setting.key}-7f3a9c`;
  if (setting.type === 'select') return setting.default ?? setting.choices?.[0] ?? '';
  if (setting.type === 'number') return setting.default ?? 1;
  if (setting.type === 'boolean') return setting.default ?? false;
  if (setting.default !== undefined && setting.default !== null && setting.default !== '')
    return setting.default;
  switch (setting.format) {
    case 'uri':
      return `https://${destination.dir}.vendor.example/`;
    case 'uuid':
      return '00000000-0000-4000-8000-000000000001';
    case 'hostname':
      return `${destination.dir}.vendor.example`;
    case 'password':
      return `secret-${setting.key}-7f3a9c`;
  }
  // Free-text settings the destination builds URLs from.
  if (/ur[il]|endpoint/i.test(setting.key)) return `https://${destination.dir}.vendor.example`;
  if (/domain|host/i.test(setting.key)) return `${destination.dir}.vendor.example`;
  return `test-${setting.key}`;
}

/** Every setting of the destination with a fixture value, frozen as the router hands settings over. */
export function fixtureSettings(destination: ActionsDestinationData): Readonly<Record<string, unknown>> {
  return Object.freeze(
    Object.fromEntries(
      destination.settings.map((setting) => [setting.key, fixtureSettingValue(destination, setting)]),
    ),
  );
}

/** The fixture values of secret settings, to redact from recorded requests. */
export function fixtureSecrets(destination: ActionsDestinationData): string[] {
  return destination.settings
    .filter((setting) => setting.type === 'password' || setting.format === 'password')
    .map((setting) => String(fixtureSettingValue(destination, setting)));
}

const base = {
  anonymousId: 'anon-7d1e',
  userId: 'user-42',
  timestamp: '2026-03-01T12:00:00.000Z',
  sentAt: '2026-03-01T12:00:00.500Z',
  receivedAt: '2026-03-01T12:00:01.000Z',
  originalTimestamp: '2026-03-01T12:00:00.000Z',
  context: {
    ip: '203.0.113.9',
    locale: 'en-US',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Tributary-Test',
    library: { name: 'analytics-node', version: '3.1.0' },
    page: {
      path: '/pricing',
      url: 'https://shop.example/pricing',
      title: 'Pricing',
      referrer: 'https://search.example/',
    },
    device: { id: 'device-1', type: 'ios', manufacturer: 'Apple', model: 'iPhone15,2' },
    os: { name: 'iOS', version: '17.4' },
    app: { name: 'Shop', version: '2.3.1', build: '231' },
    traits: { email: 'ada@example.com' },
  },
  integrations: {},
};

export const FIXTURE_MESSAGES: readonly NormalizedMessage[] = [
  {
    ...base,
    type: 'track',
    messageId: 'msg-track-1',
    event: 'Order Completed',
    properties: {
      order_id: 'order-9',
      revenue: 42.5,
      total: 42.5,
      currency: 'USD',
      products: [{ product_id: 'sku-1', sku: 'sku-1', name: 'Tea', price: 21.25, quantity: 2 }],
    },
  },
  {
    ...base,
    type: 'identify',
    messageId: 'msg-identify-1',
    traits: {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+15555550100',
      plan: 'pro',
    },
  },
  {
    ...base,
    type: 'page',
    messageId: 'msg-page-1',
    name: 'Pricing',
    properties: { path: '/pricing', url: 'https://shop.example/pricing', title: 'Pricing' },
  },
  { ...base, type: 'screen', messageId: 'msg-screen-1', name: 'Checkout', properties: { step: 2 } },
  {
    ...base,
    type: 'group',
    messageId: 'msg-group-1',
    groupId: 'group-7',
    traits: { name: 'Initech', plan: 'enterprise', industry: 'Software' },
  },
  { ...base, type: 'alias', messageId: 'msg-alias-1', previousId: 'anon-7d1e' },
] as unknown as NormalizedMessage[];
