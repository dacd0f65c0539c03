import { Get, Inject, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConfigApiController, ConfigApiError, WorkspaceInPath } from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { functionName } from '@tributary/contracts';
import {
  EventLogUnavailableError,
  FUNCTION_LOG_STORE,
  InvalidFunctionLogPageTokenError,
  type FunctionLogEntry,
  type FunctionLogStore,
} from '@tributary/event-log';
import { PageRequest, parsePageSize } from '../shared/pagination';

const DEFAULT_PAGE_SIZE = 100;

/** One entry as the route answers it (specs/functions.md §7); absent fields are empty strings. */
export function presentFunctionLogEntry(entry: FunctionLogEntry) {
  return {
    time: entry.time,
    level: entry.level,
    message: entry.message,
    instance: entry.instance ?? '',
    message_id: entry.messageId ?? '',
    version: entry.version,
    invocation_id: entry.invocationId,
  };
}

/**
 * A function's logs (specs/functions.md §7): the `console.*` lines and thrown errors of its
 * invocations, newest first, `?instance=` to narrow to one instance. Read from the store every
 * process running functions writes to (the message log's), so every replica's invocations are in
 * the answer; it keeps a function's newest 1,000 entries of the last 24 h. Tenant data: readable
 * with a token of the workspace, as the function itself is.
 */
@ApiTags('functions')
@ConfigApiController('v1beta/workspaces/:workspace/functions/:function/logs')
export class FunctionLogsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(FUNCTION_LOG_STORE) private readonly logs: FunctionLogStore,
  ) {}

  @Get()
  async list(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @Query() query: PageRequest & { instance?: unknown },
  ) {
    const view = this.readModel.function(workspace.slug, functionId);
    if (!view) {
      throw ConfigApiError.notFound(
        `${functionName({ workspaceSlug: workspace.slug, functionId })} not found`,
      );
    }
    const pageSize = parsePageSize(query.page_size, DEFAULT_PAGE_SIZE);
    if (query.page_token !== undefined && typeof query.page_token !== 'string') {
      throw ConfigApiError.invalidArgument('page_token must be given once');
    }
    if (query.instance !== undefined && typeof query.instance !== 'string') {
      throw ConfigApiError.invalidArgument('instance must be given once');
    }
    const { workspaceId } = view.function;
    try {
      const page = await this.logs.listFunctionLogs(workspaceId, view.function.functionId, {
        pageSize,
        pageToken: query.page_token,
        // An empty `instance=` narrows to nothing in particular: every instance.
        instance: query.instance || undefined,
      });
      return { logs: page.entries.map(presentFunctionLogEntry), next_page_token: page.nextPageToken };
    } catch (error) {
      if (error instanceof InvalidFunctionLogPageTokenError)
        throw ConfigApiError.invalidArgument(error.message);
      if (error instanceof EventLogUnavailableError) {
        throw ConfigApiError.unavailable('the function log store is unavailable; retry later');
      }
      throw error;
    }
  }
}
