export { webhooksDefinition } from './webhooks.definition';
export {
  WebhooksDeliveryAdapter,
  readWebhookTarget,
  WEBHOOK_TIMEOUT_MS,
  type WebhooksAdapterOptions,
  type WebhookTarget,
} from './webhooks.adapter';
export {
  problemWithWebhookHeaders,
  MAX_WEBHOOK_HEADERS,
  MAX_WEBHOOK_HEADER_NAME_BYTES,
  MAX_WEBHOOK_HEADER_VALUE_BYTES,
} from './webhook-settings.validator';
export { trimHttpWhitespace } from './http-whitespace';
