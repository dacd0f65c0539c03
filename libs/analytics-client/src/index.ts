export { Analytics, type CallResult } from './analytics.client';
export {
  AnalyticsDeliveryError,
  AnalyticsError,
  AnalyticsQueueError,
  AnalyticsRejectedError,
  AnalyticsValidationError,
  type AnalyticsDeliveryFailure,
  type AnalyticsValidationCode,
  type ServerRejection,
} from './errors';
export { MAX_BATCH_BYTES } from './batch-envelope';
export {
  MAX_MESSAGE_BYTES,
  MAX_MESSAGE_ID_LENGTH,
  type AliasParams,
  type AnalyticsMessage,
  type CommonParams,
  type EventType,
  type GroupParams,
  type Id,
  type IdentifyParams,
  type JsonMap,
  type PageParams,
  type ScreenParams,
  type Timestamp,
  type TrackParams,
} from './message-builder';
export {
  MAX_BATCH_SIZE,
  REGION_HOSTS,
  type AnalyticsLogger,
  type OAuthOptions,
  type AnalyticsOptions,
  type ErrorHandler,
  type LogLevel,
  type Region,
  type RetryBackoffOptions,
} from './options';
export { LIBRARY_NAME, VERSION } from './version';
