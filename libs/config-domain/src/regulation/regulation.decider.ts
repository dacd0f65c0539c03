import { alreadyExists, Decider, DomainError, failedPrecondition, notFound } from '../shared/decider';
import {
  FinalDestinationStatus,
  FinalRegulationStatus,
  RegulationEvent,
  RegulationRecord,
  RegulationStatus,
  RegulationStreamStatus,
  RegulationSubjectType,
  RegulationType,
} from './regulation.events';

/** What each type does (docs/regulations.md §1). */
export interface RegulationTypeRules {
  /** New messages of the subjects are dropped at ingest. */
  suppresses: boolean;
  /** Lifts the subjects' suppression. */
  unsuppresses: boolean;
  /** Tributary's own stores are cleaned of the subjects' messages. */
  deletes: boolean;
  /** The deletion is forwarded to the destinations (the PostgreSQL destination included). */
  forwards: boolean;
  /** Only the message log, dead letters and attempt histories; only at source scope. */
  archiveOnly: boolean;
}

const rules = (flags: Partial<RegulationTypeRules>): RegulationTypeRules => ({
  suppresses: false,
  unsuppresses: false,
  deletes: false,
  forwards: false,
  archiveOnly: false,
  ...flags,
});

export const REGULATION_TYPE_RULES: Readonly<Record<RegulationType, RegulationTypeRules>> = {
  SUPPRESS_ONLY: rules({ suppresses: true }),
  UNSUPPRESS: rules({ unsuppresses: true }),
  DELETE_INTERNAL: rules({ deletes: true }),
  SUPPRESS_WITH_DELETE_INTERNAL: rules({ suppresses: true, deletes: true }),
  DELETE_ONLY: rules({ deletes: true, forwards: true }),
  SUPPRESS_WITH_DELETE: rules({ suppresses: true, deletes: true, forwards: true }),
  DELETE_ARCHIVE_ONLY: rules({ deletes: true, archiveOnly: true }),
};

/** Config API v1beta spellings beside the Public names, which are accepted everywhere. */
const V1BETA_TYPE_ALIASES: Readonly<Record<string, RegulationType>> = {
  SUPPRESS: 'SUPPRESS_ONLY',
  DELETE: 'DELETE_ONLY',
};

export const MAX_REGULATION_SUBJECTS = 5_000;
export const MAX_REGULATION_SUBJECT_LENGTH = 1_024;

/** The request fields a refusal names, by their Public API names (the Config API maps them to its own). */
export type RegulationRequestField = 'regulationType' | 'subjectType' | 'subjectIds';

/** A create refused for one of its fields: the Config API answers 400 code 3, the Public API 422 with `field`. */
export class RegulationRequestError extends DomainError {
  constructor(
    readonly field: RegulationRequestField,
    message: string,
  ) {
    super('invalid_argument', message);
    this.name = 'RegulationRequestError';
  }
}

export interface RegulationRequest {
  regulationType: unknown;
  subjectType: unknown;
  subjectIds: unknown;
}

export interface CheckedRegulationRequest {
  regulationType: RegulationType;
  subjectType: RegulationSubjectType;
  subjectIds: string[];
}

/**
 * A create request checked and normalized: the type by its Public name (v1beta aliases accepted when
 * `acceptAliases`), the subject type allowed for it and the scope, and 1 to 5,000 subject ids of 1 to
 * 1,024 characters, each kept once in the order sent. Throws `RegulationRequestError` naming the field.
 */
export function checkRegulationRequest(
  request: RegulationRequest,
  scope: 'workspace' | 'source',
  options: { acceptAliases: boolean },
): CheckedRegulationRequest {
  const regulationType = regulationTypeNamed(request.regulationType, options.acceptAliases);
  if (!regulationType) {
    throw new RegulationRequestError(
      'regulationType',
      `unknown regulation type ${JSON.stringify(request.regulationType)}; expected one of ${Object.keys(REGULATION_TYPE_RULES).join(', ')}`,
    );
  }
  const archiveOnly = REGULATION_TYPE_RULES[regulationType].archiveOnly;
  if (archiveOnly && scope === 'workspace') {
    throw new RegulationRequestError(
      'regulationType',
      'DELETE_ARCHIVE_ONLY applies to one source: create it on the source',
    );
  }
  const subjectType = request.subjectType;
  if (subjectType === 'OBJECT_ID') {
    throw new RegulationRequestError(
      'subjectType',
      'OBJECT_ID is not supported: Tributary has no cloud sources',
    );
  }
  if (subjectType !== 'USER_ID' && subjectType !== 'ANONYMOUS_ID') {
    throw new RegulationRequestError(
      'subjectType',
      `unknown subject type ${JSON.stringify(subjectType)}; expected USER_ID (or ANONYMOUS_ID with DELETE_ARCHIVE_ONLY)`,
    );
  }
  if (subjectType === 'ANONYMOUS_ID' && !archiveOnly) {
    throw new RegulationRequestError('subjectType', 'ANONYMOUS_ID is accepted only with DELETE_ARCHIVE_ONLY');
  }
  return { regulationType, subjectType, subjectIds: checkSubjectIds(request.subjectIds) };
}

/** A type by its Public name, or (with `acceptAliases`) by a Config API spelling in any case. */
export function regulationTypeNamed(name: unknown, acceptAliases: boolean): RegulationType | undefined {
  if (typeof name !== 'string') return undefined;
  const upper = name.toUpperCase();
  if (Object.hasOwn(REGULATION_TYPE_RULES, upper)) {
    // The Public API takes its names as written; the Config API in any case.
    return acceptAliases || upper === name ? (upper as RegulationType) : undefined;
  }
  return acceptAliases && Object.hasOwn(V1BETA_TYPE_ALIASES, upper) ? V1BETA_TYPE_ALIASES[upper] : undefined;
}

function checkSubjectIds(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new RegulationRequestError('subjectIds', 'at least one subject id is required');
  }
  if (ids.length > MAX_REGULATION_SUBJECTS) {
    throw new RegulationRequestError(
      'subjectIds',
      `${ids.length} subject ids; a regulation takes at most ${MAX_REGULATION_SUBJECTS}`,
    );
  }
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (typeof id !== 'string') {
      throw new RegulationRequestError('subjectIds', `subject id [${index}] is not a string`);
    }
    if (id.length === 0 || id.length > MAX_REGULATION_SUBJECT_LENGTH) {
      throw new RegulationRequestError(
        'subjectIds',
        `subject id [${index}] must be 1 to ${MAX_REGULATION_SUBJECT_LENGTH} characters long`,
      );
    }
    seen.add(id);
  });
  return [...seen];
}

/** A regulation's progress, as both APIs show it (docs/regulations.md §2). */
export interface RegulationProgress {
  status: RegulationStatus;
  streams: RegulationStreamStatus[];
  startTime: string | null;
  finishTime: string | null;
}

export type RegulationState =
  | { status: 'absent' }
  | { status: 'active'; regulation: RegulationRecord; progress: RegulationProgress }
  | { status: 'deleted' };

export type RegulationCommand =
  | {
      type: 'CreateRegulation';
      regulation: RegulationRecord;
      workspaceExists: boolean;
      /**
       * For a source-scoped UNSUPPRESS: which of its subjects are suppressed at workspace scope (the
       * read model's facts), which it cannot lift.
       */
      suppressedAtWorkspaceScope: string[];
      /** The destinations in scope now: a type that neither deletes nor forwards lists them at once. */
      streams: RegulationStreamStatus[];
    }
  | { type: 'DeleteRegulation' }
  | { type: 'StartRegulation'; streams: RegulationStreamStatus[]; now: string }
  | {
      type: 'SettleRegulationDestination';
      sourceId: string;
      destinationSlug: string;
      status: FinalDestinationStatus;
      errString: string;
      now: string;
    }
  | { type: 'FinishRegulation'; status: FinalRegulationStatus; now: string };

const FINAL_STATUSES = new Set<RegulationStatus>(['FINISHED', 'PARTIAL_SUCCESS', 'FAILED', 'INVALID']);

export const isFinalRegulationStatus = (status: RegulationStatus): status is FinalRegulationStatus =>
  FINAL_STATUSES.has(status);

export const regulationDecider: Decider<RegulationState, RegulationCommand, RegulationEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateRegulation': {
        const { regulation } = command;
        if (!command.workspaceExists) throw notFound(`workspaces/${regulation.workspaceSlug} not found`);
        if (state.status !== 'absent')
          throw alreadyExists(`regulation ${regulation.regulationId} already exists`);
        const typeRules = REGULATION_TYPE_RULES[regulation.regulationType];
        if (typeRules.unsuppresses && regulation.source && command.suppressedAtWorkspaceScope.length > 0) {
          throw failedPrecondition(
            `${command.suppressedAtWorkspaceScope.length} of the subjects are suppressed for the whole workspace ` +
              `(the first: ${JSON.stringify(command.suppressedAtWorkspaceScope[0])}); unsuppress them at workspace scope`,
          );
        }
        const created: RegulationEvent = { type: 'RegulationCreated', data: regulation };
        if (typeRules.deletes) return [created];
        // Nothing to erase or forward: the suppression (or its lifting) is the whole work, done once
        // the projections hold it, which the create waits for.
        const identity = { workspaceSlug: regulation.workspaceSlug, regulationId: regulation.regulationId };
        return [
          created,
          {
            type: 'RegulationStarted',
            data: {
              ...identity,
              streams: notSupportedEverywhere(command.streams, regulation.createTime),
              startTime: regulation.createTime,
            },
          },
          {
            type: 'RegulationFinished',
            data: { ...identity, status: 'FINISHED', finishTime: regulation.createTime },
          },
        ];
      }
      case 'DeleteRegulation': {
        const { regulation, progress } = requireActive(state);
        if (progress.status !== 'INITIALIZED') {
          throw failedPrecondition(
            `the regulation is ${progress.status.toLowerCase()}; only an initialized regulation can be cancelled`,
          );
        }
        return [{ type: 'RegulationDeleted', data: regulation }];
      }
      case 'StartRegulation': {
        if (state.status !== 'active' || state.progress.status !== 'INITIALIZED') return [];
        return [
          {
            type: 'RegulationStarted',
            data: { ...identity(state.regulation), streams: command.streams, startTime: command.now },
          },
        ];
      }
      case 'SettleRegulationDestination': {
        if (state.status !== 'active') return [];
        const destination = state.progress.streams
          .find((stream) => stream.sourceId === command.sourceId)
          ?.destinations.find((candidate) => candidate.destinationSlug === command.destinationSlug);
        if (destination?.status !== 'RUNNING') return [];
        return [
          {
            type: 'RegulationDestinationSettled',
            data: {
              ...identity(state.regulation),
              sourceId: command.sourceId,
              destinationSlug: command.destinationSlug,
              status: command.status,
              errString: command.errString,
              finishTime: command.now,
            },
          },
        ];
      }
      case 'FinishRegulation': {
        if (state.status !== 'active' || isFinalRegulationStatus(state.progress.status)) return [];
        return [
          {
            type: 'RegulationFinished',
            data: { ...identity(state.regulation), status: command.status, finishTime: command.now },
          },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'RegulationCreated':
        return {
          status: 'active',
          regulation: event.data,
          progress: { status: 'INITIALIZED', streams: [], startTime: null, finishTime: null },
        };
      case 'RegulationDeleted':
        return { status: 'deleted' };
      case 'RegulationStarted':
        return withProgress(state, (progress) => ({
          ...progress,
          status: 'RUNNING',
          streams: event.data.streams,
          startTime: event.data.startTime,
        }));
      case 'RegulationDestinationSettled': {
        const { sourceId, destinationSlug, status, errString, finishTime } = event.data;
        return withProgress(state, (progress) => ({
          ...progress,
          streams: progress.streams.map((stream) =>
            stream.sourceId !== sourceId
              ? stream
              : {
                  ...stream,
                  destinations: stream.destinations.map((destination) =>
                    destination.destinationSlug === destinationSlug
                      ? { ...destination, status, errString, finishTime }
                      : destination,
                  ),
                },
          ),
        }));
      }
      case 'RegulationFinished':
        return withProgress(state, (progress) => ({
          ...progress,
          status: event.data.status,
          finishTime: event.data.finishTime,
        }));
    }
  },
};

/**
 * The overall status once the stores' part is over (docs/regulations.md §2): destinations that are
 * not supported do not count; FINISHED when every supported one finished, FAILED when the stores
 * failed or every supported one failed, PARTIAL_SUCCESS in between.
 */
export function overallRegulationStatus(
  storesSucceeded: boolean,
  streams: readonly RegulationStreamStatus[],
): FinalRegulationStatus {
  if (!storesSucceeded) return 'FAILED';
  const supported = streams.flatMap((stream) =>
    stream.destinations.filter((destination) => destination.status !== 'NOT_SUPPORTED'),
  );
  const failed = supported.filter((destination) => destination.status === 'FAILED').length;
  if (failed === 0) return 'FINISHED';
  return failed === supported.length ? 'FAILED' : 'PARTIAL_SUCCESS';
}

function notSupportedEverywhere(streams: RegulationStreamStatus[], time: string): RegulationStreamStatus[] {
  return streams.map((stream) => ({
    ...stream,
    destinations: stream.destinations.map((destination) => ({
      ...destination,
      status: 'NOT_SUPPORTED',
      errString: 'the regulation type sends nothing to destinations',
      finishTime: time,
    })),
  }));
}

function withProgress(
  state: RegulationState,
  change: (progress: RegulationProgress) => RegulationProgress,
): RegulationState {
  return state.status === 'active' ? { ...state, progress: change(state.progress) } : state;
}

function requireActive(state: RegulationState) {
  if (state.status !== 'active') throw notFound('regulation not found');
  return state;
}

function identity(regulation: RegulationRecord) {
  return { workspaceSlug: regulation.workspaceSlug, regulationId: regulation.regulationId };
}
