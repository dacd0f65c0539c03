export * from './delivery-adapter.port';
export { classifyHttpStatus, parseRetryAfter } from './http-response.classifier';
export {
  createDeliveryAdapterRegistry,
  DELIVERABLE_DESTINATION_SLUGS,
  type DeliveryAdapterRegistryOptions,
} from './delivery-adapter.registry';
export {
  WebhooksDeliveryAdapter,
  readWebhookTarget,
  WEBHOOK_TIMEOUT_MS,
  type WebhooksAdapterOptions,
  type WebhookTarget,
} from './adapters/webhooks/webhooks.adapter';
export { PostgresDeliveryAdapter, type PostgresAdapterOptions } from './adapters/postgres/postgres.adapter';
export {
  planWarehouseRows,
  toSnakeCase,
  eventTableName,
  type WarehousePlan,
  type WarehouseRow,
  type WarehouseValue,
} from './adapters/postgres/warehouse-row.planner';
export {
  EgressGuard,
  EgressDeniedError,
  isEgressDenied,
  systemHostResolver,
  type HostResolver,
  type ResolvedAddress,
} from './egress/egress-guard';
export {
  decideEgress,
  parseEgressPolicy,
  OPEN_EGRESS_POLICY,
  EGRESS_MODES,
  type EgressDecision,
  type EgressMode,
  type EgressPolicy,
} from './egress/egress-policy';
export {
  problemWithConnectionString,
  pinnedPostgresConnection,
} from './adapters/postgres/postgres-connection';
export {
  problemWithWebhookHeaders,
  MAX_WEBHOOK_HEADERS,
  MAX_WEBHOOK_HEADER_NAME_BYTES,
  MAX_WEBHOOK_HEADER_VALUE_BYTES,
} from './adapters/webhooks/webhook-settings.validator';
export { trimHttpWhitespace } from './adapters/webhooks/http-whitespace';
export {
  secrecyOfSetting,
  isSecretHeaderName,
  mapSubscriptionSecrets,
  type SubscriptionSecret,
  problemWithDeliverySetting,
  urlHasCredentials,
  maskUrlCredentials,
  type SettingSecrecy,
} from './delivery-settings';
export {
  SegmentActionsDeliveryAdapter,
  SegmentActionsRuntime,
  ACTIONS_REQUEST_TIMEOUT_MS,
  ACTIONS_MESSAGE_TIMEOUT_MS,
  type SegmentActionsRuntimeOptions,
} from './adapters/segment-actions/segment-actions.adapter';
export { createEgressAgents, type EgressAgents } from './egress/egress-agents';
export {
  ActionsLane,
  ACTIONS_LANE_HEAP_MB,
  ACTIONS_WATCHDOG_GRACE_MS,
  MAX_ACTIONS_OVERRUNS,
  type ActionsLaneOptions,
} from './adapters/segment-actions/actions-lane';
export { MAX_ACTIONS_RESPONSE_BYTES } from './adapters/segment-actions/actions-error.classifier';
export {
  ActionsAuthenticationTester,
  type AuthenticationTestResult,
} from './adapters/segment-actions/actions-authentication.tester';
