import type { RegulationView } from '@tributary/config-projections';
import { NOT_FINISHED_TIME } from '../regulations/regulation.presenter';
import { withMilliseconds } from '../shared/timestamps';
import { publicDestinationId } from './public-api-resources';

/**
 * RegulationListEntryV1 (docs/public-api.md, "Regulations"): statuses uppercase, `finishedAt` once the
 * regulation is final.
 */
export function presentPublicRegulationListEntry({ regulation, progress }: RegulationView) {
  return {
    id: regulation.regulationId,
    subjectType: regulation.subjectType,
    subjects: regulation.subjectIds,
    status: progress.status,
    createdAt: withMilliseconds(regulation.createTime),
    ...(progress.finishTime !== null && { finishedAt: withMilliseconds(progress.finishTime) }),
    regulationType: regulation.regulationType,
  };
}

/**
 * Regulation: one `streamStatus` per source in scope (its source id), one `destinationStatus` per
 * destination (its Public API id), every field of DestinationStatusV1 present; the list entry's
 * `regulationType`, `subjectType` and `subjects` are added, as the spec allows.
 */
export function presentPublicRegulation(workspaceId: string, view: RegulationView) {
  const { regulation, progress } = view;
  return {
    id: regulation.regulationId,
    workspaceId,
    overallStatus: progress.status,
    createdAt: withMilliseconds(regulation.createTime),
    ...(progress.finishTime !== null && { finishedAt: withMilliseconds(progress.finishTime) }),
    streamStatus: progress.streams.map((stream) => ({
      id: stream.sourceId,
      destinationStatus: stream.destinations.map((destination) => ({
        name: destination.displayName,
        id: publicDestinationId({ sourceId: stream.sourceId, destinationSlug: destination.destinationSlug }),
        status: destination.status,
        errString: destination.errString,
        finishedAt:
          destination.finishTime === null ? NOT_FINISHED_TIME : withMilliseconds(destination.finishTime),
      })),
    })),
    regulationType: regulation.regulationType,
    subjectType: regulation.subjectType,
    subjects: regulation.subjectIds,
  };
}
