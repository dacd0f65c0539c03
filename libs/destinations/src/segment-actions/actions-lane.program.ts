/**
 * The program the Actions lane's workers run (`actions-lane.ts`): Segment's Actions destinations, with
 * the adapter and authentication tester that run them in a single thread, behind two tasks. Each worker
 * has its own egress guard, with the deployment's policy, that resolves host names through the guard of
 * the thread that started the lane: the policy is checked here, on the addresses connected to.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import type { LaneServices, LaneTasks } from '@tributary/lanes';
import { findActionsDestination } from './actions-catalog.entries';
import type {
  DeliveryResult,
  UserDeletionOutcome,
  UserDeletionRequest,
} from '../delivery/delivery-adapter.port';
import { EgressGuard, type ResolvedAddress } from '../delivery/egress/egress-guard';
import type { EgressPolicy } from '../delivery/egress/egress-policy';
import { ActionsAuthenticationTester, type AuthenticationTestResult } from './actions-authentication.tester';
import { SegmentActionsDeliveryAdapter, SegmentActionsRuntime } from './segment-actions.adapter';

export interface ActionsLaneProgramData {
  readonly egressPolicy: EgressPolicy;
  readonly requestTimeoutMs?: number;
  readonly messageTimeoutMs?: number;
  readonly ca?: string | Buffer;
  readonly portMap?: Readonly<Record<number, number>>;
}

export interface ActionsDeliverInput {
  readonly slug: string;
  /** Names one settings object of the sending thread; `settings` is its copy. */
  readonly settingsKey: number;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly messages: readonly NormalizedMessage[];
}

export interface ActionsDeleteInput {
  readonly slug: string;
  readonly request: UserDeletionRequest;
}

export interface ActionsTestInput {
  readonly slug: string;
  readonly settings: Readonly<Record<string, unknown>>;
}

/** The lane's service that resolves a host name with the starting thread's resolver. */
export const RESOLVE_HOST_SERVICE = 'resolveHost';

/** Settings copies kept per worker, so that a destination's config is prepared once, not per message. */
const MAX_KEPT_SETTINGS = 1_024;

export async function startLaneProgram(
  data: ActionsLaneProgramData,
  services: LaneServices,
): Promise<LaneTasks> {
  const egressGuard = new EgressGuard(data.egressPolicy, (hostName) =>
    services.call<readonly ResolvedAddress[]>(RESOLVE_HOST_SERVICE, hostName),
  );
  const options = {
    egressGuard,
    ...(data.requestTimeoutMs !== undefined && { requestTimeoutMs: data.requestTimeoutMs }),
    ...(data.messageTimeoutMs !== undefined && { messageTimeoutMs: data.messageTimeoutMs }),
    ...(data.ca !== undefined && { ca: data.ca }),
    ...(data.portMap !== undefined && { portMap: data.portMap }),
  };
  const runtime = new SegmentActionsRuntime(options);
  const tester = new ActionsAuthenticationTester(options);
  const adapters = new Map<string, SegmentActionsDeliveryAdapter>();
  // The adapter prepares a config once per frozen settings object: the same key gets the same object.
  const keptSettings = new Map<number, Readonly<Record<string, unknown>>>();
  const settingsFor = (key: number, copy: Readonly<Record<string, unknown>>) => {
    let settings = keptSettings.get(key);
    if (settings === undefined) {
      if (keptSettings.size >= MAX_KEPT_SETTINGS) keptSettings.delete(keptSettings.keys().next().value!);
      settings = Object.freeze(copy);
      keptSettings.set(key, settings);
    }
    return settings;
  };
  const adapterOf = (slug: string): SegmentActionsDeliveryAdapter => {
    let adapter = adapters.get(slug);
    if (!adapter) {
      const destination = findActionsDestination(slug);
      if (!destination) throw new Error(`${slug} is not an Actions destination`);
      adapter = new SegmentActionsDeliveryAdapter(destination, runtime);
      adapters.set(slug, adapter);
    }
    return adapter;
  };
  return {
    deliver: async (input: ActionsDeliverInput): Promise<DeliveryResult[]> => {
      const adapter = adapterOf(input.slug);
      return adapter.deliver({
        settings: settingsFor(input.settingsKey, input.settings),
        messages: input.messages,
      });
    },
    deleteUsers: (input: ActionsDeleteInput): Promise<UserDeletionOutcome> =>
      adapterOf(input.slug).deleteUsers(input.request),
    testAuthentication: (input: ActionsTestInput): Promise<AuthenticationTestResult | undefined> =>
      tester.test(input.slug, input.settings),
  };
}
