export * from './delivery-adapter.port';
export { classifyHttpStatus, parseRetryAfter } from './http-response.classifier';
export {
  createDeliveryAdapterRegistry,
  type DeliveryAdapterRegistryOptions,
} from './delivery-adapter.registry';
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
  secrecyOfSetting,
  isSecretHeaderName,
  mapSubscriptionSecrets,
  type SubscriptionSecret,
  problemWithDeliverySetting,
  urlHasCredentials,
  maskUrlCredentials,
  type SettingSecrecy,
} from './delivery-settings';
export { createEgressAgents, type EgressAgents } from './egress/egress-agents';
