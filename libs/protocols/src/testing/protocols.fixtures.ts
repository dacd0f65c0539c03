import { DEFAULT_SCHEMA_CONFIG } from '@tributary/config-domain';
import type { EnforcementSettings, JsonSchema, TrackingMessage } from '../protocols.types';

/** A source's schema config as created: everything allowed. */
export const PERMISSIVE_SETTINGS: EnforcementSettings = DEFAULT_SCHEMA_CONFIG;

export function settings(overrides: Partial<EnforcementSettings> = {}): EnforcementSettings {
  return { ...PERMISSIVE_SETTINGS, ...overrides };
}

/** A draft-07 rule of the whole message whose `properties` object has these property schemas. */
export function propertiesRule(
  properties: Record<string, JsonSchema>,
  required: string[] = [],
  extra: JsonSchema = {},
): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      context: {},
      traits: {},
      properties: { type: 'object', properties, required, ...extra },
    },
    required: ['properties'],
  };
}

/** The same for the `traits` object of identify and group. */
export function traitsRule(traits: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { traits: { type: 'object', properties: traits, required } },
  };
}

let counter = 0;

/** A message as ingest normalization leaves it. */
export function normalized(fields: Record<string, unknown>): TrackingMessage {
  counter += 1;
  return {
    messageId: `msg-${counter}`,
    userId: 'user-1',
    context: { library: { name: 'analytics-node', version: '3.1.0' } },
    integrations: {},
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
    type: 'track',
    ...fields,
  } as TrackingMessage;
}
