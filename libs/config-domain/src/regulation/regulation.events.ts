/**
 * A privacy regulation (docs/regulations.md): suppress users' new messages, delete what Tributary
 * stores about them, and forward the deletion to destinations, as the regulation's type says.
 */
export type RegulationType =
  | 'SUPPRESS_ONLY'
  | 'UNSUPPRESS'
  | 'DELETE_INTERNAL'
  | 'SUPPRESS_WITH_DELETE_INTERNAL'
  | 'DELETE_ONLY'
  | 'SUPPRESS_WITH_DELETE'
  | 'DELETE_ARCHIVE_ONLY';

export type RegulationSubjectType = 'USER_ID' | 'ANONYMOUS_ID';

/** Statuses by their Public API names; the Config API shows them in lowercase. */
export type RegulationStatus =
  'INITIALIZED' | 'RUNNING' | 'FINISHED' | 'PARTIAL_SUCCESS' | 'FAILED' | 'INVALID' | 'NOT_SUPPORTED';

/** The statuses a regulation ends in; they never change afterwards. */
export type FinalRegulationStatus = Extract<
  RegulationStatus,
  'FINISHED' | 'PARTIAL_SUCCESS' | 'FAILED' | 'INVALID'
>;

/** The statuses a destination's part of a regulation ends in. */
export type FinalDestinationStatus = Extract<RegulationStatus, 'FINISHED' | 'FAILED' | 'NOT_SUPPORTED'>;

export interface RegulationRecord {
  workspaceSlug: string;
  /** A 27-character KSUID, the same in both APIs. */
  regulationId: string;
  regulationType: RegulationType;
  subjectType: RegulationSubjectType;
  /** 1 to 5,000, each kept once, in the order they were sent. */
  subjectIds: string[];
  /** The source the regulation is scoped to; null for the whole workspace. */
  source: { sourceId: string; sourceSlug: string; displayName: string } | null;
  createTime: string;
}

/** One destination's part of a regulation, taken when the regulation starts. */
export interface RegulationDestinationStatus {
  destinationSlug: string;
  displayName: string;
  status: Extract<RegulationStatus, 'RUNNING' | FinalDestinationStatus>;
  /** Why it failed or is not supported; '' otherwise. Never holds a secret. */
  errString: string;
  finishTime: string | null;
}

/** The destinations of one source in scope. */
export interface RegulationStreamStatus {
  sourceId: string;
  sourceSlug: string;
  destinations: RegulationDestinationStatus[];
}

type RegulationIdentity = { workspaceSlug: string; regulationId: string };

export type RegulationEvent =
  | { type: 'RegulationCreated'; data: RegulationRecord }
  /** Cancelled before any work began; carries the request again, for the audit trail. */
  | { type: 'RegulationDeleted'; data: RegulationRecord }
  | {
      type: 'RegulationStarted';
      data: RegulationIdentity & { streams: RegulationStreamStatus[]; startTime: string };
    }
  | {
      type: 'RegulationDestinationSettled';
      data: RegulationIdentity & {
        sourceId: string;
        destinationSlug: string;
        status: FinalDestinationStatus;
        errString: string;
        finishTime: string;
      };
    }
  | {
      type: 'RegulationFinished';
      data: RegulationIdentity & { status: FinalRegulationStatus; finishTime: string };
    };
