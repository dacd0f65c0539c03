/**
 * Shapes of the Config API's responses (docs/config-api.md §3 and Tributary's own routes), as the
 * presenters write them and the web console reads them. Types only: responses are built by the
 * server, so nothing here parses.
 */
import type { DeliveryOutcome } from '../delivery/delivery-outcome';
import type { CatalogDestination, CatalogSource } from '../catalog/catalog.schemas';

export interface WorkspaceResource {
  name: string;
  display_name: string;
  id: string;
  region?: string;
  oauth_required?: boolean;
  create_time: string;
}

export interface SourceResource {
  name: string;
  parent: string;
  catalog_name: string;
  display_name?: string;
  id?: string;
  write_keys: string[];
  create_time: string;
}

export interface DestinationConfigEntry {
  name: string;
  display_name: string;
  value: unknown;
  type: string;
}

export interface DestinationResource {
  name: string;
  parent: string;
  display_name: string;
  catalog_name?: string;
  enabled: boolean;
  connection_mode: string;
  config: DestinationConfigEntry[];
  create_time: string;
  update_time: string;
}

export interface FilterResource {
  name: string;
  title: string;
  description: string;
  if: string;
  enabled: boolean;
  actions: { type: string; [key: string]: unknown }[];
}

export interface FilterPreviewResponse {
  /** `pass`, or why the event is held back: `dropped`, `sampled_out`, `invalid_filter`. */
  result: string;
  /** The event as the destination would receive it (JSON text); null when held back. */
  output: string | null;
}

export interface TrackingPlanResource {
  name: string;
  display_name: string;
  rules: {
    events: { name: string; description?: string; version?: number; rules?: unknown }[];
    identify_traits?: unknown[];
    group_traits?: unknown[];
    [key: string]: unknown;
  };
  create_time: string;
  update_time: string;
}

export interface AccessTokenResource {
  name: string;
  description: string;
  scopes: string;
  workspace_names: string[];
  create_time: string;
  /** When the token stops working; absent for a token that never expires. */
  expire_time?: string;
  /** The plaintext: only in the answer to a create. */
  token?: string;
}

export interface OAuthApplicationResource {
  name: string;
  client_id: string;
  display_name: string;
  public_keys: { key_id: string }[];
  token_lifetime_seconds: number;
  create_time: string;
}

export interface AuditEventResource {
  name?: string;
  type: string;
  resource_name?: string;
  actor?: string;
  request_id?: string;
  time: string;
  [key: string]: unknown;
}

export interface DeliveryMetricsResource {
  name: string;
  destination_name: string;
  counts: Record<DeliveryOutcome, number>;
  latency_ms: Record<string, { p50: number | null; p95: number | null; samples: number }>;
  recent_discards: { message_id: string; reason: string; time: string }[];
  /**
   * Set while the destination's lane has stopped running it (Actions destinations whose deliveries
   * kept running past the lane's time or heap budget): its messages are retried without running until
   * its settings change.
   */
  suspension?: { status: 'suspended'; reason: string; since: string } | null;
  /** Dead letters (also in `counts.dead_lettered`) by why: the retry window ran out, or poison. */
  dead_letters_by_cause?: { retries_exhausted: number; poison: number };
  last_hour: {
    bucket_seconds: number;
    buckets: {
      start_time: string;
      counts: Record<DeliveryOutcome, number>;
      latency_ms: { p50: number | null; p95: number | null };
    }[];
  };
}

export interface DeadLetterResource {
  name: string;
  message_id: string;
  reason: string;
  attempts: { time: string; outcome: string }[];
  dead_letter_time: string;
  message: Record<string, unknown>;
}

export interface ReplayResource {
  name: string;
  start_time: string;
  end_time: string | null;
  state: string;
  counts: Record<string, number> | null;
  failure_reason: string | null;
  create_time: string;
  finish_time: string | null;
}

export interface MessageDeliveriesResponse {
  message_deliveries: {
    message_id: string;
    destinations: { destination_name: string; outcome: DeliveryOutcome; time: string; detail?: string }[];
  }[];
}

export interface ListResponses {
  workspaces: { workspaces: WorkspaceResource[]; next_page_token: string };
  sources: { sources: SourceResource[]; next_page_token: string };
  destinations: { destinations: DestinationResource[]; next_page_token: string };
  filters: { filters: FilterResource[]; next_page_token: string };
  trackingPlans: { tracking_plans: TrackingPlanResource[]; next_page_token: string };
  accessTokens: { access_tokens: AccessTokenResource[]; next_page_token: string };
  oauthApplications: { oauth_applications: OAuthApplicationResource[]; next_page_token: string };
  auditEvents: { audit_events: AuditEventResource[]; next_page_token: string };
  deadLetters: { dead_letters: DeadLetterResource[]; next_page_token: string };
  replays: { replays: ReplayResource[]; next_page_token: string };
  catalogSources: { sources: CatalogSource[]; next_page_token: string };
  catalogDestinations: { destinations: CatalogDestination[]; next_page_token: string };
}
