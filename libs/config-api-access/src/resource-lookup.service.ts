import { Injectable } from '@nestjs/common';
import {
  ConfigReadModel,
  DestinationView,
  SourceView,
  TrackingPlanView,
} from '@tributary/config-projections';
import { OAuthApplicationRecord, WorkspaceRecord } from '@tributary/config-domain';
import {
  destinationName,
  oauthApplicationName,
  sourceName,
  trackingPlanName,
  workspaceName,
} from '@tributary/contracts';
import { ConfigApiError } from './config-api.error';

/** Reads a resource by its URL parts, or answers 404 with the resource name. */
@Injectable()
export class ResourceLookup {
  constructor(private readonly readModel: ConfigReadModel) {}

  workspace(workspaceSlug: string): WorkspaceRecord {
    const workspace = this.readModel.workspace(workspaceSlug);
    if (!workspace) throw ConfigApiError.notFound(`${workspaceName(workspaceSlug)} not found`);
    return workspace;
  }

  source(workspaceSlug: string, sourceSlug: string): SourceView {
    this.workspace(workspaceSlug);
    const view = this.readModel.source(workspaceSlug, sourceSlug);
    if (!view) throw ConfigApiError.notFound(`${sourceName({ workspaceSlug, sourceSlug })} not found`);
    return view;
  }

  destination(
    workspaceSlug: string,
    sourceSlug: string,
    destinationSlug: string,
  ): DestinationView & { sourceView: SourceView } {
    const sourceView = this.source(workspaceSlug, sourceSlug);
    const view = this.readModel.destination(sourceView.source.sourceId, destinationSlug);
    if (!view) {
      throw ConfigApiError.notFound(
        `${destinationName({ workspaceSlug, sourceSlug, destinationSlug })} not found`,
      );
    }
    return { ...view, sourceView };
  }

  trackingPlan(workspaceSlug: string, planId: string): TrackingPlanView {
    this.workspace(workspaceSlug);
    const view = this.readModel.trackingPlan(workspaceSlug, planId);
    if (!view) throw ConfigApiError.notFound(`${trackingPlanName({ workspaceSlug, planId })} not found`);
    return view;
  }

  oauthApplication(workspaceSlug: string, applicationId: string): OAuthApplicationRecord {
    this.workspace(workspaceSlug);
    const application = this.readModel.oauthApplication(workspaceSlug, applicationId);
    if (!application)
      throw ConfigApiError.notFound(`${oauthApplicationName({ workspaceSlug, applicationId })} not found`);
    return application;
  }
}
