import { Injectable } from '@nestjs/common';
import type { DestinationRecord, WorkspaceRecord } from '@tributary/config-domain';
import {
  ConfigReadModel,
  DestinationView,
  SourceView,
  TrackingPlanView,
} from '@tributary/config-projections';
import { PublicApiError } from './public-api.error';

/**
 * A destination's Public API id: its source id and slug, which name it in the config's streams, as one
 * opaque token. Every destination has one however it was created, and it never changes.
 */
export function publicDestinationId(
  destination: Pick<DestinationRecord, 'sourceId' | 'destinationSlug'>,
): string {
  return Buffer.from(`${destination.sourceId}/${destination.destinationSlug}`).toString('base64url');
}

/** A tracking plan's Public API id: `tp_` and the KSUID of its v1beta id `rs_...`. */
export function publicTrackingPlanId(planId: string): string {
  return `tp_${planId.replace(/^rs_/, '')}`;
}

/**
 * The resources a Public API path names, by their Public API ids, in the caller's workspace only: an
 * id of another workspace is 404 exactly like one that does not exist.
 */
@Injectable()
export class PublicApiResources {
  constructor(private readonly readModel: ConfigReadModel) {}

  /** The workspace's sources, oldest first. */
  sources(workspace: WorkspaceRecord): SourceView[] {
    return this.readModel
      .listSources(workspace.slug)
      .sort((a, b) => a.source.createTime.localeCompare(b.source.createTime));
  }

  source(workspace: WorkspaceRecord, sourceId: string): SourceView {
    const view = this.readModel
      .listSources(workspace.slug)
      .find(({ source }) => source.sourceId === sourceId);
    if (!view) throw PublicApiError.notFound();
    return view;
  }

  /** Every destination of the workspace, oldest first. */
  destinations(workspace: WorkspaceRecord, sourceId?: string): DestinationView[] {
    const views =
      sourceId === undefined
        ? this.readModel
            .listAllDestinations()
            .filter(({ destination }) => destination.workspaceSlug === workspace.slug)
        : this.readModel.listDestinations(sourceId);
    return views.sort((a, b) => a.destination.createTime.localeCompare(b.destination.createTime));
  }

  destination(workspace: WorkspaceRecord, id: string): DestinationView {
    const decoded = Buffer.from(id, 'base64url').toString('utf8');
    const slash = decoded.lastIndexOf('/');
    const view =
      slash > 0 ? this.readModel.destination(decoded.slice(0, slash), decoded.slice(slash + 1)) : undefined;
    if (!view || view.destination.workspaceSlug !== workspace.slug) throw PublicApiError.notFound();
    return view;
  }

  trackingPlans(workspace: WorkspaceRecord): TrackingPlanView[] {
    return this.readModel
      .listTrackingPlans(workspace.slug)
      .sort((a, b) => a.plan.createTime.localeCompare(b.plan.createTime));
  }

  /** `tp_...` or the v1beta `rs_...` id. */
  trackingPlan(workspace: WorkspaceRecord, id: string): TrackingPlanView {
    const ksuid = /^(?:tp|rs)_(.+)$/.exec(id)?.[1];
    const view = ksuid === undefined ? undefined : this.readModel.trackingPlan(workspace.slug, `rs_${ksuid}`);
    if (!view) throw PublicApiError.notFound();
    return view;
  }
}
