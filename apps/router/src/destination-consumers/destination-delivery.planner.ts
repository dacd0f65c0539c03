import { catalogSlugOf, type DestinationRecord } from '@tributary/config-domain';
import { destinationName } from '@tributary/contracts';
import { findCatalogDestination } from '@tributary/destinations';
import { declaredEntries, type FunctionKind, type FunctionVersion } from '@tributary/functions';
import type { RoutableDestination } from '@tributary/routing';

/** What the planner reads of a function (the read model's `FunctionRecord` has it). */
export interface PlannableFunction {
  readonly functionId: string;
  readonly workspaceId: string;
  readonly type: FunctionKind;
  readonly displayName: string;
  readonly deployedVersion: number;
  readonly versions: readonly { readonly version: number; readonly code: string }[];
}

/**
 * Who sends a message once routing let it through: a catalog entry's adapter, a destination function,
 * or nobody, with the reason each message is discarded for (its function is gone or of another kind),
 * so an operator sees why.
 */
export type Deliverer =
  | { readonly kind: 'adapter'; readonly catalogSlug: string }
  | {
      readonly kind: 'function';
      readonly fn: FunctionVersion;
      /** For the function's logs: the destination's resource name. */
      readonly instance: string;
      /**
       * The version declares `onBatch`: messages are gathered into its calls instead of each going to
       * the handler of its type (docs/functions.md §2).
       */
      readonly gathers: boolean;
    }
  | { readonly kind: 'refused'; readonly reason: string };

/** An enabled insert function, run on each message before its deliverer (§5.3). */
export interface PlannedInsertFunction {
  readonly fn: FunctionVersion;
  /** Its instance's config: decrypt before invoking (the planner does no I/O and holds no keys). */
  readonly config: Record<string, unknown>;
  /** For the function's logs: `…/destinations/{dst}/insert-functions/{ifnd_…}`. */
  readonly instance: string;
}

/**
 * How one destination delivers, worked out from its record and the functions it names: the one
 * place that tells a catalog destination from a destination function, so nothing else in the router
 * switches on slugs. Undefined when nothing can deliver for it any more (a catalog entry this build
 * lacks): its messages are settled without an outcome, as for a deleted destination.
 */
export interface DestinationDeliveryPlan {
  readonly deliverer: Deliverer;
  /** Routing's view: a function destination routes as the webhooks destination does. */
  readonly displayName: string;
  readonly capabilities: RoutableDestination['capabilities'];
  /** Undefined when the destination has none, or a disabled one (which passes messages unchanged). */
  readonly insertFunction?: PlannedInsertFunction;
  /**
   * The function records the plan was made from: a deploy replaces one, and the plan with it.
   * Undefined when the destination names no function (nothing but a new record changes its plan).
   */
  readonly madeFrom?: readonly [PlannableFunction | undefined, PlannableFunction | undefined];
}

export type FunctionLookup = (workspaceSlug: string, functionId: string) => PlannableFunction | undefined;

/** The capabilities of a destination function: those of a webhook, which it replaces. */
const FUNCTION_CAPABILITIES: RoutableDestination['capabilities'] = {
  acceptsHistoricalTimestampsUpToMs: null,
  destinationFiltersApply: true,
};

/** `dfn_…`: a destination whose catalog slug is a destination function's id is that function's instance. */
export function destinationFunctionIdOf(record: Pick<DestinationRecord, 'catalogSlug' | 'destinationSlug'>) {
  const catalogSlug = catalogSlugOf(record);
  return catalogSlug.startsWith('dfn_') ? catalogSlug : undefined;
}

export function planDestinationDelivery(
  record: DestinationRecord,
  functionOf: FunctionLookup,
): DestinationDeliveryPlan | undefined {
  const functionId = destinationFunctionIdOf(record);
  const namesFunctions = functionId !== undefined || record.insertFunction?.enabled === true;
  const madeFrom = namesFunctions ? functionsNamedBy(record, functionOf) : undefined;
  const [destinationRecord, insertRecord] = madeFrom ?? [];
  const catalogEntry = functionId === undefined ? findCatalogDestination(catalogSlugOf(record)) : undefined;
  if (functionId === undefined && !catalogEntry) return undefined;

  let deliverer: Deliverer;
  if (functionId !== undefined) {
    const fn = destinationRecord && deployedVersionOf(destinationRecord, 'DESTINATION');
    deliverer = fn
      ? {
          kind: 'function',
          fn,
          instance: destinationName(record),
          gathers: declaredEntries('DESTINATION', fn.code).includes('onBatch'),
        }
      : { kind: 'refused', reason: `${functionId} is not a deployed destination function of the workspace` };
  } else {
    deliverer = { kind: 'adapter', catalogSlug: catalogEntry!.slug };
  }

  let insertFunction: PlannedInsertFunction | undefined;
  const insert = record.insertFunction;
  if (insert?.enabled) {
    const fn = insertRecord && deployedVersionOf(insertRecord, 'INSERT_DESTINATION');
    if (fn) {
      insertFunction = {
        fn,
        config: insert.config,
        instance: `${destinationName(record)}/insert-functions/${insert.functionId}`,
      };
    } else if (deliverer.kind !== 'refused') {
      // Sending the message without the function the tenant put in front (to mask or drop data)
      // would be worse than not sending it.
      deliverer = {
        kind: 'refused',
        reason: `insert function ${insert.functionId} is not a deployed insert function of the workspace`,
      };
    }
  }

  return {
    deliverer,
    displayName: catalogEntry?.displayName ?? destinationRecord?.displayName ?? record.displayName,
    capabilities: catalogEntry?.capabilities ?? FUNCTION_CAPABILITIES,
    insertFunction,
    madeFrom,
  };
}

/** Whether a plan still stands: the functions it was made from are still the read model's records. */
export function isPlanCurrent(
  plan: DestinationDeliveryPlan,
  record: DestinationRecord,
  functionOf: FunctionLookup,
): boolean {
  // Plans are kept per record, and a record never changes: one that names no function stays current.
  if (plan.madeFrom === undefined) return true;
  const [destinationFunction, insertFunction] = functionsNamedBy(record, functionOf);
  return destinationFunction === plan.madeFrom[0] && insertFunction === plan.madeFrom[1];
}

/** The destination function and the enabled insert function a destination names, as the read model has them now. */
function functionsNamedBy(
  record: DestinationRecord,
  functionOf: FunctionLookup,
): readonly [PlannableFunction | undefined, PlannableFunction | undefined] {
  const functionId = destinationFunctionIdOf(record);
  const insert = record.insertFunction;
  return [
    functionId === undefined ? undefined : functionOf(record.workspaceSlug, functionId),
    insert?.enabled ? functionOf(record.workspaceSlug, insert.functionId) : undefined,
  ];
}

function deployedVersionOf(record: PlannableFunction, kind: FunctionKind): FunctionVersion | undefined {
  if (record.type !== kind) return undefined;
  const deployed = record.versions.find((version) => version.version === record.deployedVersion);
  if (!deployed) return undefined;
  return {
    workspaceId: record.workspaceId,
    functionId: record.functionId,
    version: deployed.version,
    kind,
    code: deployed.code,
  };
}
