/**
 * Segment Actions destinations in their own lane: every delivery and authentication test runs on a
 * worker thread of a `WorkerThreadsLane` (heap limit, watchdog), so a destination whose mapping or code
 * runs away ends one worker's calls, never the router or the Config API.
 *
 * - A delivery that overruns the watchdog is retried, and counted against its destination (a source's
 *   destination of one catalog slug, with one settings object): after `MAX_ACTIONS_OVERRUNS` the
 *   destination is suspended, and its deliveries are retried without running, until its settings
 *   change. `suspensionOf` tells the Config API why.
 * - Calls that shared a worker with the one that overran, or with one that ran out of heap, are retried
 *   and not counted: nothing says they were at fault.
 */
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { WorkerThreadsLane } from '@tributary/lanes';
import type { ActionsDestinationData } from './actions-catalog.types';
import {
  retry,
  sameOutcomeForAll,
  type DeliveryAdapter,
  type DeliveryRequest,
  type DeliveryResult,
  type DestinationSuspension,
  type UserDeletionOutcome,
  type UserDeletionRequest,
} from '../delivery/delivery-adapter.port';
import { EgressGuard } from '../delivery/egress/egress-guard';
import type { AuthenticationTestResult } from './actions-authentication.tester';
import {
  RESOLVE_HOST_SERVICE,
  type ActionsDeleteInput,
  type ActionsDeliverInput,
  type ActionsLaneProgramData,
  type ActionsTestInput,
} from './actions-lane.program';
import { ACTIONS_MESSAGE_TIMEOUT_MS, type SegmentActionsRuntimeOptions } from './segment-actions.adapter';

/** Each worker's old-generation heap, in MiB. */
export const ACTIONS_LANE_HEAP_MB = 256;
/**
 * The watchdog waits this long past a call's own message timeout: a call that has not answered by then
 * has a worker whose event loop is not turning (a timeout would have answered it).
 */
export const ACTIONS_WATCHDOG_GRACE_MS = 2_000;
/** Overruns of one destination config before it is suspended. */
export const MAX_ACTIONS_OVERRUNS = 3;

export interface ActionsLaneOptions extends SegmentActionsRuntimeOptions {
  /** Worker threads; default: the cores, at most 4. */
  readonly workers?: number;
  readonly heapMb?: number;
  /** Default: `messageTimeoutMs` + `ACTIONS_WATCHDOG_GRACE_MS`. */
  readonly callTimeoutMs?: number;
}

export type ActionsSuspension = DestinationSuspension;

interface Overruns {
  readonly settings: object;
  count: number;
  suspension?: ActionsSuspension;
}

export class ActionsLane {
  private readonly lane: WorkerThreadsLane;
  private readonly settingsKeys = new WeakMap<object, number>();
  private nextSettingsKey = 1;
  /** By `${sourceId} ${slug}`: the overruns of the destination's current settings. */
  private readonly overruns = new Map<string, Overruns>();

  constructor(options: ActionsLaneOptions = {}) {
    const guard = options.egressGuard ?? new EgressGuard();
    const messageTimeoutMs = options.messageTimeoutMs ?? ACTIONS_MESSAGE_TIMEOUT_MS;
    const programData: ActionsLaneProgramData = {
      egressPolicy: guard.policy,
      messageTimeoutMs,
      ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.ca !== undefined && { ca: options.ca }),
      ...(options.portMap !== undefined && { portMap: options.portMap }),
    };
    this.lane = new WorkerThreadsLane({
      name: 'actions',
      program: join(__dirname, `actions-lane.program${extname(__filename)}`),
      programData,
      workers: options.workers ?? Math.min(4, availableParallelism()),
      heapMb: options.heapMb ?? ACTIONS_LANE_HEAP_MB,
      callTimeoutMs: options.callTimeoutMs ?? messageTimeoutMs + ACTIONS_WATCHDOG_GRACE_MS,
      services: { [RESOLVE_HOST_SERVICE]: (hostName: string) => guard.resolver(hostName) },
    });
  }

  get stats() {
    return this.lane.stats;
  }

  /** The delivery adapter of a catalog entry, running in this lane. */
  deliveryAdapter(data: ActionsDestinationData): DeliveryAdapter {
    return new LanedActionsDeliveryAdapter(data.slug, this);
  }

  /** `ActionsAuthenticationTester.test` in the lane: `undefined` when `slug` is not an Actions destination. */
  async testAuthentication(
    slug: string,
    settings: Readonly<Record<string, unknown>>,
  ): Promise<AuthenticationTestResult | undefined> {
    const input: ActionsTestInput = { slug, settings };
    const outcome = await this.lane.run<AuthenticationTestResult | undefined>('testAuthentication', input);
    if (outcome.ok) return outcome.value;
    return { status: 'FAILED', message: `the test did not finish: ${outcome.detail}` };
  }

  /** Whether the destination of `slug` on `sourceId` is suspended, and why. */
  suspensionOf(sourceId: string, slug: string): ActionsSuspension | undefined {
    return this.overruns.get(`${sourceId} ${slug}`)?.suspension;
  }

  async deliver(slug: string, request: DeliveryRequest): Promise<DeliveryResult[]> {
    const destinationKey = `${request.sourceId ?? ''} ${slug}`;
    let overruns = this.overruns.get(destinationKey);
    if (overruns && overruns.settings !== request.settings) {
      // The config changed: whatever overran may be fixed.
      this.overruns.delete(destinationKey);
      overruns = undefined;
    }
    if (overruns?.suspension) {
      return sameOutcomeForAll(
        request.messages,
        retry(`destination suspended: ${overruns.suspension.reason}`),
      );
    }
    const input: ActionsDeliverInput = {
      slug,
      settingsKey: this.settingsKeyOf(request.settings),
      settings: request.settings,
      messages: request.messages,
    };
    const outcome = await this.lane.run<DeliveryResult[]>('deliver', input);
    if (outcome.ok) return outcome.value;
    if (outcome.failure === 'overrun') this.noteOverrun(destinationKey, request.settings);
    return sameOutcomeForAll(request.messages, retry(`actions lane: ${outcome.detail}`));
  }

  /** `SegmentActionsDeliveryAdapter.deleteUsers` in the lane. */
  async deleteUsers(slug: string, request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    const input: ActionsDeleteInput = { slug, request };
    const outcome = await this.lane.run<UserDeletionOutcome>('deleteUsers', input);
    if (outcome.ok) return outcome.value;
    return { outcome: 'retry', reason: `actions lane: ${outcome.detail}` };
  }

  close(): Promise<void> {
    return this.lane.close();
  }

  private noteOverrun(destinationKey: string, settings: object): void {
    const overruns = this.overruns.get(destinationKey) ?? { settings, count: 0 };
    overruns.count += 1;
    if (overruns.count >= MAX_ACTIONS_OVERRUNS && !overruns.suspension) {
      overruns.suspension = {
        status: 'suspended',
        reason: `${overruns.count} deliveries ran past the lane's budget (time or heap); change the destination's settings (its mappings) to resume`,
        since: new Date().toISOString(),
      };
    }
    this.overruns.set(destinationKey, overruns);
  }

  private settingsKeyOf(settings: object): number {
    let key = this.settingsKeys.get(settings);
    if (key === undefined) {
      key = this.nextSettingsKey++;
      // Only a frozen object stays the same config; another gets a key per call.
      if (Object.isFrozen(settings)) this.settingsKeys.set(settings, key);
    }
    return key;
  }
}

class LanedActionsDeliveryAdapter implements DeliveryAdapter {
  constructor(
    readonly slug: string,
    private readonly lane: ActionsLane,
  ) {}

  deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    return this.lane.deliver(this.slug, request);
  }

  deleteUsers(request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    return this.lane.deleteUsers(this.slug, request);
  }

  suspensionOf(sourceId: string): DestinationSuspension | undefined {
    return this.lane.suspensionOf(sourceId, this.slug);
  }

  async close(): Promise<void> {
    // The lane is shared by every Actions adapter of a registry; the registry closes it.
  }
}
