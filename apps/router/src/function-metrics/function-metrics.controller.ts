import { Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConfigApiController, ConfigApiError, WorkspaceInPath } from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { functionName } from '@tributary/contracts';
import { FunctionMetrics } from '@tributary/functions';

/**
 * A function's invocations since this process started (specs/functions.md §7): counts by outcome,
 * duration percentiles over its recent invocations, CPU time. Served by the router, from the counts
 * it keeps in memory (as `delivery-metrics.controller.ts` does for destinations): it runs destination
 * and insert functions. A source function runs in the tracking API, which records its counts in its
 * own process: they are in this answer only where both share a process (the all-in-one); a router
 * alone answers zeros for a source function. Each router replica answers its own invocations.
 */
@ApiTags('functions')
@ConfigApiController('v1beta/workspaces/:workspace/functions/:function/metrics')
export class FunctionMetricsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly metrics: FunctionMetrics,
  ) {}

  @Get()
  summary(@WorkspaceInPath() workspace: WorkspaceRecord, @Param('function') functionId: string) {
    const view = this.readModel.function(workspace.slug, functionId);
    if (!view) {
      throw ConfigApiError.notFound(
        `${functionName({ workspaceSlug: workspace.slug, functionId })} not found`,
      );
    }
    return this.metrics.snapshot(view.function.workspaceId, view.function.functionId);
  }
}
