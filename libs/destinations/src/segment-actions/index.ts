export { ACTIONS_DEFINITIONS } from './actions.definitions';
export {
  findActionsDestination,
  listActionsDestinations,
  SUBSCRIPTIONS_SETTING,
} from './actions-catalog.entries';
export type * from './actions-catalog.types';
export {
  problemWithActionsSubscriptions,
  MAX_ACTIONS_SUBSCRIPTIONS,
} from './actions-subscriptions.validator';
export {
  SegmentActionsDeliveryAdapter,
  SegmentActionsRuntime,
  ACTIONS_REQUEST_TIMEOUT_MS,
  ACTIONS_MESSAGE_TIMEOUT_MS,
  type SegmentActionsRuntimeOptions,
} from './segment-actions.adapter';
export {
  ActionsLane,
  ACTIONS_LANE_HEAP_MB,
  ACTIONS_WATCHDOG_GRACE_MS,
  MAX_ACTIONS_OVERRUNS,
  type ActionsLaneOptions,
} from './actions-lane';
export { MAX_ACTIONS_RESPONSE_BYTES } from './actions-error.classifier';
export { ActionsAuthenticationTester, type AuthenticationTestResult } from './actions-authentication.tester';
