/** Protocols enforcement settings of a source (docs/config-api.md §3 SchemaConfig), in wire (snake_case) names. */
export interface SchemaConfig {
  allow_unplanned_track_events: boolean;
  allow_unplanned_identify_traits: boolean;
  allow_unplanned_group_traits: boolean;
  forwarding_blocked_events_to: string;
  allow_unplanned_track_event_properties: boolean;
  allow_track_event_on_violations: boolean;
  allow_identify_traits_on_violations: boolean;
  allow_group_traits_on_violations: boolean;
  forwarding_violations_to: string;
  allow_track_properties_on_violations: boolean;
  common_track_event_on_violations: 'ALLOW' | 'OMIT_PROPERTIES' | 'BLOCK';
  common_identify_event_on_violations: 'ALLOW' | 'OMIT_TRAITS' | 'BLOCK';
  common_group_event_on_violations: 'ALLOW' | 'OMIT_TRAITS' | 'BLOCK';
}

/** A new source lets everything through: enforcement is something an operator opts into. */
export const DEFAULT_SCHEMA_CONFIG: SchemaConfig = {
  allow_unplanned_track_events: true,
  allow_unplanned_identify_traits: true,
  allow_unplanned_group_traits: true,
  forwarding_blocked_events_to: '',
  allow_unplanned_track_event_properties: true,
  allow_track_event_on_violations: true,
  allow_identify_traits_on_violations: true,
  allow_group_traits_on_violations: true,
  forwarding_violations_to: '',
  allow_track_properties_on_violations: true,
  common_track_event_on_violations: 'ALLOW',
  common_identify_event_on_violations: 'ALLOW',
  common_group_event_on_violations: 'ALLOW',
};

/**
 * Values a masked-but-absent field takes (docs/config-api.md §1.6). Go clients leave `false` out of the body
 * while masking the field, so the zero value of a boolean must be `false`. For the enums, proto3's
 * zero is the first value, `ALLOW`.
 */
export const SCHEMA_CONFIG_ZERO_VALUES: Record<keyof SchemaConfig, unknown> = {
  allow_unplanned_track_events: false,
  allow_unplanned_identify_traits: false,
  allow_unplanned_group_traits: false,
  forwarding_blocked_events_to: '',
  allow_unplanned_track_event_properties: false,
  allow_track_event_on_violations: false,
  allow_identify_traits_on_violations: false,
  allow_group_traits_on_violations: false,
  forwarding_violations_to: '',
  allow_track_properties_on_violations: false,
  common_track_event_on_violations: 'ALLOW',
  common_identify_event_on_violations: 'ALLOW',
  common_group_event_on_violations: 'ALLOW',
};

const TRACK_ACTIONS = ['ALLOW', 'OMIT_PROPERTIES', 'BLOCK'];
const TRAIT_ACTIONS = ['ALLOW', 'OMIT_TRAITS', 'BLOCK'];

/** Returns a reason when a value does not fit its field, or undefined when it does. */
export function schemaConfigValueProblem(field: keyof SchemaConfig, value: unknown): string | undefined {
  // Checked first: the rules below go by name prefix, which would let any `allow_*` name through.
  if (!Object.hasOwn(DEFAULT_SCHEMA_CONFIG, field)) return `${field} is not a schema config field`;
  if (field.startsWith('allow_'))
    return typeof value === 'boolean' ? undefined : `${field} must be a boolean`;
  if (field.startsWith('forwarding_'))
    return typeof value === 'string' ? undefined : `${field} must be a string`;
  const allowed = field === 'common_track_event_on_violations' ? TRACK_ACTIONS : TRAIT_ACTIONS;
  return allowed.includes(value as string) ? undefined : `${field} must be one of ${allowed.join(', ')}`;
}
