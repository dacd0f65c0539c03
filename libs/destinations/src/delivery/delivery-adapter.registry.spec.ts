import { findCatalogDestination } from '../catalog';
import { DESTINATION_DEFINITIONS } from '../definitions';
import { createDeliveryAdapterRegistry } from './delivery-adapter.registry';
import { classifyHttpStatus, parseRetryAfter } from './http-response.classifier';

describe('createDeliveryAdapterRegistry', () => {
  it('has an adapter for every definition: webhooks, postgres and each Actions destination', async () => {
    const registry = createDeliveryAdapterRegistry();
    for (const slug of ['webhooks', 'postgres', 'actions-amplitude', 'actions-mixpanel']) {
      expect(findCatalogDestination(slug)).toBeDefined();
      const adapter = registry.deliveryAdapterFor(slug);
      expect(adapter?.slug).toBe(slug);
      // One shared instance per slug, so pools and connections are reused.
      expect(registry.deliveryAdapterFor(slug)).toBe(adapter);
    }
    for (const { catalog } of DESTINATION_DEFINITIONS)
      expect(registry.deliveryAdapterFor(catalog.slug)?.slug).toBe(catalog.slug);
    await registry.close();
  });

  it('has no adapter for a retired catalog entry, nor for an unknown slug', () => {
    const registry = createDeliveryAdapterRegistry();
    expect(findCatalogDestination('mixpanel')).toBeUndefined();
    expect(registry.deliveryAdapterFor('mixpanel')).toBeUndefined();
    expect(registry.deliveryAdapterFor('no-such-destination')).toBeUndefined();
    expect(registry.deliveryAdapterFor('__proto__')).toBeUndefined();
    expect(registry.deliveryAdapterFor('toString')).toBeUndefined();
  });
});

describe('classifyHttpStatus (docs/tracking-api.md §12.2)', () => {
  it.each([200, 201, 204, 299])('%i is delivered', (status) => {
    expect(classifyHttpStatus(status, null, '')).toEqual({ outcome: 'delivered' });
  });

  it.each([408, 429, 500, 502, 503, 504, 599])('%i is retried', (status) => {
    expect(classifyHttpStatus(status, null, 'oops')).toEqual({
      outcome: 'retry',
      status,
      reason: `HTTP ${status}: oops`,
    });
  });

  it.each([400, 401, 403, 404, 409, 410, 413, 422, 451])('%i is discarded', (status) => {
    expect(classifyHttpStatus(status, '5', 'no')).toEqual({
      outcome: 'discard',
      status,
      reason: `HTTP ${status}: no`,
    });
  });

  it('honours Retry-After on 429 and 503 only', () => {
    expect(classifyHttpStatus(429, '2', '')).toMatchObject({ retryAfterMs: 2_000 });
    expect(classifyHttpStatus(503, '0', '')).toMatchObject({ retryAfterMs: 0 });
    expect(classifyHttpStatus(500, '2', '')).not.toHaveProperty('retryAfterMs');
    expect(classifyHttpStatus(429, 'soon', '')).not.toHaveProperty('retryAfterMs');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1_500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
  });
  it('never answers a negative delay or garbage', () => {
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('later', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
