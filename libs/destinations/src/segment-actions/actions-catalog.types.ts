/**
 * What the build keeps of each Segment Actions destination (`@segment/action-destinations`), so that
 * the Config API and the tracking API know the catalog without loading any destination's code.
 * Written by `npm run catalog:actions` into `actions-catalog.generated.ts`.
 */
import type { JsonValue } from '../catalog/catalog-entry.types';

export interface ActionsSettingData {
  readonly key: string;
  readonly label: string;
  /** Tributary's setting type: `password` for secrets, `select` for fields with choices. */
  readonly type: 'string' | 'password' | 'number' | 'boolean' | 'select';
  readonly required: boolean;
  readonly default?: JsonValue;
  readonly choices?: readonly string[];
  /** The JSON-schema format the destination checks (`uri`, `email`, ...). */
  readonly format?: string;
  readonly description?: string;
}

/** One subscription: which messages (`subscribe`, FQL) run which action with which mapping. */
export interface ActionsSubscription {
  /** Kept from creation on, so that clients (the Public API, Terraform) can name the subscription. */
  readonly id?: string;
  readonly name?: string;
  /** `false`: kept but not run. Absent is enabled. */
  readonly enabled?: boolean;
  readonly subscribe: string;
  readonly partnerAction: string;
  readonly mapping: { readonly [field: string]: JsonValue };
}

export interface ActionsFieldData {
  readonly type: string;
  /** `true` only when the field is always required (conditional requirements are the action's own). */
  readonly required: boolean;
  readonly multiple: boolean;
  /** What a mapping that leaves the field out gets (a literal or a mapping directive). */
  readonly default?: JsonValue;
  readonly choices?: readonly (string | number | boolean)[];
}

export interface ActionsActionData {
  readonly title: string;
  /** The action has `performBatch`: a subscription with `enable_batching` is sent through `onBatch`. */
  readonly batch: boolean;
  readonly fields: { readonly [field: string]: ActionsFieldData };
}

export interface ActionsDestinationData {
  /** The folder under `@segment/action-destinations/dist/destinations/`, loaded on first delivery. */
  readonly dir: string;
  /** Segment's own slug (`actions-amplitude`), the catalog slug. */
  readonly slug: string;
  /** Segment's display name ("Actions Amplitude"), what a message's `integrations` object names. */
  readonly name: string;
  readonly description: string;
  readonly hasTestAuthentication: boolean;
  readonly settings: readonly ActionsSettingData[];
  /** The automatic presets: the default of the `subscriptions` setting. */
  readonly presets: readonly ActionsSubscription[];
  readonly actions: { readonly [action: string]: ActionsActionData };
}
