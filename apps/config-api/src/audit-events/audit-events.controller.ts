import { auditEventName } from '@tributary/contracts';
import { ConfigApiController, ConfigApiError, WorkspaceInPath } from '@tributary/config-api-access';
import { Get, Inject, Query } from '@nestjs/common';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ApiTags } from '@nestjs/swagger';
import { AuditEntry, readAuditPage } from '@tributary/config-projections';
import { EVENT_STORE, type EventStore } from '@tributary/event-store';
import { PageRequest, parsePageSize } from '../shared/pagination';

function presentAuditEntry(workspaceSlug: string, entry: AuditEntry) {
  return {
    name: auditEventName(workspaceSlug, entry.position),
    type: entry.type,
    resource_name: entry.resourceName,
    actor: entry.actor,
    request_id: entry.requestId,
    time: entry.time,
    data: entry.data,
  };
}

/**
 * The history of every change in a workspace, newest first: the event store is the audit trail, read
 * page by page (no process keeps the trail in memory). `resource_name_prefix` narrows it to one
 * resource and what lies under it. The page token is a position in the store (the page's last entry,
 * or where reading stopped), so pages stay stable while new changes are recorded; the last page
 * carries `next_page_token: ""`. One page reads at most `AUDIT_SCAN_LIMIT` events of the store, so
 * a page may hold fewer entries than asked, or none, and still carry a next page token.
 */
@ApiTags('audit trail')
@ConfigApiController('v1beta/workspaces/:workspace/audit-events')
export class AuditEventsController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  @Get()
  async list(
    @WorkspaceInPath() { slug: workspaceSlug }: WorkspaceRecord,
    @Query() query: PageRequest & { resource_name_prefix?: string },
  ) {
    const pageSize = parsePageSize(query.page_size, 100);
    const before = parseAuditPageToken(query.page_token);
    const page = await readAuditPage(this.store, {
      workspaceSlug,
      resourceNamePrefix: typeof query.resource_name_prefix === 'string' ? query.resource_name_prefix : '',
      before,
      pageSize,
      scanLimit: this.environment.AUDIT_SCAN_LIMIT,
    });
    return {
      audit_events: page.entries.map((entry) => presentAuditEntry(workspaceSlug, entry)),
      next_page_token: page.more && page.nextBefore !== undefined ? auditPageToken(page.nextBefore) : '',
    };
  }
}

function auditPageToken(position: bigint): string {
  return Buffer.from(`before:${position}`).toString('base64url');
}

function parseAuditPageToken(token: string | undefined): bigint | undefined {
  if (!token) return undefined;
  const match =
    typeof token === 'string'
      ? /^before:(\d{1,20})$/.exec(Buffer.from(token, 'base64url').toString('utf8'))
      : null;
  if (!match) throw ConfigApiError.invalidArgument('page_token is not a token this API returned');
  return BigInt(match[1]);
}
