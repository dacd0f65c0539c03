/**
 * The Config API's resource names (docs/config-api.md §1.3). A name is also the resource's URL
 * path under `/v1beta`, so the presenters, the error messages, the audit trail, the router's routes
 * and the CLI all build names here, and a name cannot drift between what one writes and another reads.
 */

export function workspaceName(workspaceSlug: string): string {
  return `workspaces/${workspaceSlug}`;
}

export function sourceName(source: { workspaceSlug: string; sourceSlug: string }): string {
  return `${workspaceName(source.workspaceSlug)}/sources/${source.sourceSlug}`;
}

export function destinationName(destination: {
  workspaceSlug: string;
  sourceSlug: string;
  destinationSlug: string;
}): string {
  return `${sourceName(destination)}/destinations/${destination.destinationSlug}`;
}

export function trackingPlanName(plan: { workspaceSlug: string; planId: string }): string {
  return `${workspaceName(plan.workspaceSlug)}/tracking-plans/${plan.planId}`;
}

export function oauthApplicationName(application: { workspaceSlug: string; applicationId: string }): string {
  return `${workspaceName(application.workspaceSlug)}/oauth-applications/${application.applicationId}`;
}

export function regulationName(regulation: { workspaceSlug: string; regulationId: string }): string {
  return `${workspaceName(regulation.workspaceSlug)}/regulations/${regulation.regulationId}`;
}

export function functionName(fn: { workspaceSlug: string; functionId: string }): string {
  return `${workspaceName(fn.workspaceSlug)}/functions/${fn.functionId}`;
}

/** An audit event is named by its position in the event store. */
export function auditEventName(workspaceSlug: string, position: string | number | bigint): string {
  return `${workspaceName(workspaceSlug)}/audit-events/${position}`;
}

/**
 * The last segment of a resource name, or the text itself when it is already a bare slug: where a
 * slug is expected a full name is accepted too (docs/config-api.md §5.12).
 */
export function lastSegment(nameOrSlug: string): string {
  const trimmed = nameOrSlug.replace(/(?<!\/)\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}
