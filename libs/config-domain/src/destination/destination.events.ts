export type ConnectionMode = 'UNSPECIFIED' | 'CLOUD' | 'DEVICE';

export interface DestinationIdentity {
  workspaceSlug: string;
  sourceSlug: string;
  sourceId: string;
  destinationSlug: string;
}

/**
 * The holder of a destination's encrypted settings: each secret is bound to it and its setting key
 * (`secretPlace` in auth), so a stored secret opens only in the destination it was written for. The
 * source id and the slug never change for the life of a destination.
 */
export function destinationSecretsOwner(
  destination: Pick<DestinationIdentity, 'sourceId' | 'destinationSlug'>,
): string {
  return `destinations/${destination.sourceId}/${destination.destinationSlug}`;
}

/** Where an insert function's secrets on this destination belong (`secretPlace`): apart from the destination's own. */
export function insertFunctionSecretsOwner(
  destination: Pick<DestinationIdentity, 'sourceId' | 'destinationSlug'>,
): string {
  return `${destinationSecretsOwner(destination)}/insert-function`;
}

/** Where a source function's secrets (`function_config`) belong (`secretPlace`). */
export function sourceFunctionSecretsOwner(source: { sourceId: string }): string {
  return `sources/${source.sourceId}/function`;
}

export interface DestinationRecord extends DestinationIdentity {
  /**
   * The catalog entry this destination is an instance of. Usually its slug too (Segment's rule:
   * one destination per catalog entry and source); a different slug allows a second instance.
   */
  catalogSlug: string;
  displayName: string;
  connectionMode: ConnectionMode;
  enabled: boolean;
  /** Setting key -> raw JSON value; `password` values are stored encrypted, never in plaintext. */
  config: Record<string, unknown>;
  createTime: string;
  updateTime: string;
  /** The insert function that changes or drops messages before this destination's adapter; at most one. */
  insertFunction?: InsertFunctionRecord;
}

/**
 * An instance of one of the workspace's `INSERT_DESTINATION` functions on a destination: its id and
 * the values of the function's declared settings (sensitive ones stored encrypted, as passwords are).
 */
export interface InsertFunctionRecord {
  functionId: string;
  /** A disabled insert function passes messages through unchanged. */
  enabled: boolean;
  config: Record<string, unknown>;
  /** The Public API's `name` of the instance; absent: the function's display name. */
  displayName?: string;
  createTime: string;
  updateTime: string;
}

export type InsertFunctionChanges = Partial<Pick<InsertFunctionRecord, 'enabled' | 'config' | 'displayName'>>;

export interface FilterAction {
  type: string;
  [key: string]: unknown;
}

export interface FilterRecord {
  filterId: string;
  title: string;
  description: string;
  if: string;
  enabled: boolean;
  actions: FilterAction[];
  createTime: string;
  updateTime: string;
}

export type FilterChanges = Partial<
  Pick<FilterRecord, 'title' | 'description' | 'if' | 'enabled' | 'actions'>
>;

export type ReplayState = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface ReplayCounts {
  delivered: number;
  discarded: number;
  filtered: number;
  skipped: number;
  dead_lettered: number;
}

/** A replay of the log's history since `startTime` (until `endTime`, if any) to this one destination. */
export interface ReplayRecord {
  replayId: string;
  startTime: string;
  endTime: string | null;
  state: ReplayState;
  createTime: string;
  finishTime: string | null;
  counts: ReplayCounts | null;
  failureReason: string | null;
  /**
   * When an operator asked to cancel it. The replay stays RUNNING until the router that runs it has
   * stopped and recorded it CANCELLED with the counts of what it sent (absent in older events).
   */
  cancelRequestTime?: string | null;
}

export type DestinationChanges = {
  /** The Public API's `name` of the instance. */
  displayName?: string;
  enabled?: boolean;
  connectionMode?: ConnectionMode;
  config?: Record<string, unknown>;
};

export type DestinationEvent =
  | { type: 'DestinationCreated'; data: DestinationRecord }
  | {
      type: 'DestinationUpdated';
      data: DestinationIdentity & { changes: DestinationChanges; updateTime: string };
    }
  | { type: 'DestinationDeleted'; data: DestinationIdentity }
  | {
      type: 'DestinationInsertFunctionCreated';
      data: DestinationIdentity & { insertFunction: InsertFunctionRecord };
    }
  | {
      type: 'DestinationInsertFunctionUpdated';
      data: DestinationIdentity & { functionId: string; changes: InsertFunctionChanges; updateTime: string };
    }
  | { type: 'DestinationInsertFunctionDeleted'; data: DestinationIdentity & { functionId: string } }
  | { type: 'DestinationFilterCreated'; data: DestinationIdentity & { filter: FilterRecord } }
  | {
      type: 'DestinationFilterUpdated';
      data: DestinationIdentity & { filterId: string; changes: FilterChanges; updateTime: string };
    }
  | { type: 'DestinationFilterDeleted'; data: DestinationIdentity & { filterId: string } }
  | { type: 'DestinationReplayRequested'; data: DestinationIdentity & { replay: ReplayRecord } }
  | {
      type: 'DestinationReplayCancelRequested';
      data: DestinationIdentity & { replayId: string; requestTime: string };
    }
  | {
      type: 'DestinationReplayFinished';
      data: DestinationIdentity & {
        replayId: string;
        state: Exclude<ReplayState, 'RUNNING'>;
        counts: ReplayCounts;
        finishTime: string;
        failureReason: string | null;
      };
    }
  | {
      type: 'DestinationDeadLettersRedriveRequested';
      data: DestinationIdentity & { redriveId: string; requestTime: string };
    }
  | {
      type: 'DestinationDeadLettersRedriven';
      data: DestinationIdentity & {
        redriveId: string;
        /** Dead-letter sequences delivered this time: they leave the list. */
        delivered: number[];
        /** Still failing or discarded, with why: they stay listed. */
        failed: { deadLetterSequence: number; reason: string }[];
        finishTime: string;
      };
    };
