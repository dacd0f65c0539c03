import { ConfigApiController } from '../shared/config-api-controller.decorator';
import { Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AuditEntry, ConfigReadModel } from '@tributary/config-projections';
import { paginate, PageRequest } from '../shared/pagination';
import { ResourceLookup } from '../shared/resource-lookup.service';

function presentAuditEntry(workspaceSlug: string, entry: AuditEntry) {
  return {
    name: `workspaces/${workspaceSlug}/audit-events/${entry.position}`,
    type: entry.type,
    resource_name: entry.resourceName,
    actor: entry.actor,
    request_id: entry.requestId,
    time: entry.time,
    data: entry.data,
  };
}

/**
 * The history of every change in a workspace, newest first: the event store is the audit trail.
 * `resource_name_prefix` narrows it to one resource and what lies under it.
 */
@ApiTags('audit trail')
@ConfigApiController('v1beta/workspaces/:workspace/audit-events')
export class AuditEventsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly lookup: ResourceLookup,
  ) {}

  @Get()
  list(
    @Param('workspace') workspaceSlug: string,
    @Query() query: PageRequest & { resource_name_prefix?: string },
  ) {
    this.lookup.workspace(workspaceSlug);
    const prefix = query.resource_name_prefix ?? '';
    const entries = this.readModel
      .auditTrail(workspaceSlug)
      .filter((entry) => entry.resourceName.startsWith(prefix))
      .reverse();
    const { page, nextPageToken } = paginate(entries, query);
    return {
      audit_events: page.map((entry) => presentAuditEntry(workspaceSlug, entry)),
      next_page_token: nextPageToken,
    };
  }
}
