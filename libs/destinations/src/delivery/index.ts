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
  DEFAULT_WEBHOOK_BATCH_SIZE,
  MAX_WEBHOOK_BATCH_SIZE,
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
