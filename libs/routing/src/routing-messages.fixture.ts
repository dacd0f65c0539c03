/** Normalized messages for the routing tests, shaped as ingest stores them. */
import type { NormalizedMessage } from '@tributary/contracts';

export const NOW = new Date('2026-03-10T12:00:00.000Z');

export function trackMessage(overrides: Record<string, unknown> = {}): NormalizedMessage {
  return {
    type: 'track',
    event: 'Order Completed',
    messageId: 'message-1',
    userId: 'user-1',
    anonymousId: 'anonymous-1',
    context: {
      library: { name: 'analytics-python', version: '2.3.4' },
      ip: '203.0.113.7',
      consent: { categoryPreferences: { Advertising: false, Analytics: true } },
      device: { id: 'device-1', model: 'Pixel' },
    },
    integrations: {},
    properties: {
      total: 99.5,
      currency: 'EUR',
      email: 'someone@example.com',
      address: { city: 'Lyon', street: '1 rue de la Paix', zip: '69001' },
      products: [
        { sku: 'A', price: 10, internalCost: 4 },
        { sku: 'B', price: 20, internalCost: 8 },
      ],
    },
    timestamp: '2026-03-10T11:59:00.000Z',
    originalTimestamp: '2026-03-10T11:59:00.000Z',
    sentAt: '2026-03-10T11:59:01.000Z',
    receivedAt: '2026-03-10T11:59:01.500Z',
    ...overrides,
  } as NormalizedMessage;
}

export function identifyMessage(overrides: Record<string, unknown> = {}): NormalizedMessage {
  return {
    type: 'identify',
    messageId: 'message-2',
    userId: 'user-1',
    context: { ip: '203.0.113.7' },
    integrations: {},
    traits: { email: 'someone@example.com', name: 'Someone', plan: 'pro', address: { city: 'Lyon' } },
    timestamp: '2026-03-10T11:59:00.000Z',
    receivedAt: '2026-03-10T11:59:01.500Z',
    ...overrides,
  } as NormalizedMessage;
}

/** A deep, frozen copy: any attempt to mutate it throws in strict mode, and its content can be compared. */
export function deepFrozen<T>(value: T): T {
  const copy = structuredClone(value);
  const freeze = (node: unknown): void => {
    if (typeof node === 'object' && node !== null) {
      Object.values(node).forEach(freeze);
      Object.freeze(node);
    }
  };
  freeze(copy);
  return copy;
}
