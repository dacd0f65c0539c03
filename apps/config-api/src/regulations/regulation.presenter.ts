import type { RegulationDestinationStatus, RegulationRequestField } from '@tributary/config-domain';
import type { RegulationView } from '@tributary/config-projections';
import { destinationName, regulationName, sourceName } from '@tributary/contracts';
import { withMilliseconds } from '../shared/timestamps';
import type { SuppressedUser } from './regulation.commands';

/** What a destination entry shows until it is final: Go's zero time, as Segment's API answers. */
export const NOT_FINISHED_TIME = '0001-01-01T00:00:00Z';

/** A refused field, as the Config API names it in its error. */
export const V1BETA_REGULATION_FIELDS: Readonly<Record<RegulationRequestField, string>> = {
  regulationType: 'regulation_type',
  subjectType: 'attributes.name',
  subjectIds: 'attributes.values',
};

/** The Config API's `Regulation` (docs/regulations.md §2): statuses in lowercase. */
export function presentRegulation(workspaceId: string, view: RegulationView, options = { streams: true }) {
  const { regulation, progress } = view;
  const status = progress.status.toLowerCase();
  return {
    name: regulationName(regulation),
    regulate_id: regulation.regulationId,
    workspace_id: workspaceId,
    regulation_type: regulation.regulationType,
    attributes: {
      name: regulation.subjectType === 'USER_ID' ? 'userId' : 'anonymousId',
      values: regulation.subjectIds,
    },
    source_name: regulation.source
      ? sourceName({ workspaceSlug: regulation.workspaceSlug, sourceSlug: regulation.source.sourceSlug })
      : '',
    status,
    overall_status: status,
    created_at: withMilliseconds(regulation.createTime),
    ...(progress.finishTime === null ? {} : { finished_at: withMilliseconds(progress.finishTime) }),
    ...(options.streams
      ? {
          stream_status: progress.streams.map((stream) => ({
            id: stream.sourceId,
            name: sourceName({ workspaceSlug: regulation.workspaceSlug, sourceSlug: stream.sourceSlug }),
            destination_status: stream.destinations.map((destination) =>
              presentDestinationStatus(regulation.workspaceSlug, stream.sourceSlug, destination),
            ),
          })),
        }
      : {}),
  };
}

function presentDestinationStatus(
  workspaceSlug: string,
  sourceSlug: string,
  destination: RegulationDestinationStatus,
) {
  return {
    id: destinationName({ workspaceSlug, sourceSlug, destinationSlug: destination.destinationSlug }),
    name: destination.displayName,
    status: destination.status.toLowerCase(),
    err_string: destination.errString,
    finished_at:
      destination.finishTime === null ? NOT_FINISHED_TIME : withMilliseconds(destination.finishTime),
  };
}

export function presentSuppressedUser(user: SuppressedUser) {
  return {
    subject_type: user.subjectType,
    subject_id: user.subjectId,
    source_name: user.source ? sourceName(user.source.source) : '',
  };
}
