import { Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AcceptsBodiesUpTo, ChangeMetadata } from '@tributary/config-api-access';
import {
  RegulationRequestError,
  RegulationStatus,
  RegulationType,
  regulationTypeNamed,
  WorkspaceRecord,
} from '@tributary/config-domain';
import type { RegulationView, SourceView } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import {
  REGULATION_BODY_BYTES,
  REGULATION_STATUSES,
  RegulationCommands,
} from '../regulations/regulation.commands';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { paginatePublic, type PublicQuery, queryValue } from './public-api-query';
import { PublicApiResources } from './public-api-resources';
import { presentPublicRegulation, presentPublicRegulationListEntry } from './public-regulation.presenter';

/**
 * Deletion and Suppression (docs/public-api.md, "Regulations"): the regulations `/v1beta` serves, by
 * the same use cases (`RegulationCommands`), in Segment's names. Only Public names are taken, as
 * written; the token's one workspace is the scope, and a source is named by its id.
 */
@ApiTags('Deletion and Suppression')
@PublicApiController()
export class PublicRegulationsController {
  constructor(
    private readonly regulations: RegulationCommands,
    private readonly resources: PublicApiResources,
  ) {}

  @Post('regulations')
  @HttpCode(200)
  @AcceptsBodiesUpTo(REGULATION_BODY_BYTES)
  createForWorkspace(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.create(workspace, undefined, body, metadata);
  }

  @Post('regulations/sources/:sourceId')
  @HttpCode(200)
  @AcceptsBodiesUpTo(REGULATION_BODY_BYTES)
  createForSource(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('sourceId') sourceId: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.create(workspace, this.resources.source(workspace, sourceId), body, metadata);
  }

  @Get('regulations')
  listForWorkspace(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    return this.list(workspace, undefined, query);
  }

  @Get('regulations/sources/:sourceId')
  listForSource(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('sourceId') sourceId: string,
    @PublicQueryParams() query: PublicQuery,
  ) {
    return this.list(workspace, this.resources.source(workspace, sourceId), query);
  }

  @Get('regulations/:regulateId')
  get(@PublicWorkspace() workspace: WorkspaceRecord, @Param('regulateId') regulateId: string) {
    return {
      data: { regulation: presentPublicRegulation(workspace.id, this.lookup(workspace, regulateId)) },
    };
  }

  /** Gone from SDK 73, still sent by Go 57.3.0 (Terraform's): 422 once work on it began. */
  @Delete('regulations/:regulateId')
  async cancel(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('regulateId') regulateId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.regulations.cancel(this.lookup(workspace, regulateId), metadata);
    return { data: { status: 'SUCCESS' } };
  }

  /**
   * The workspace-wide suppressions, as one entry whose `subjectIds` are paged (Segment's model has
   * no place for a source); a source's own suppressions are v1beta's `suppressed-users`.
   */
  @Get('suppressions')
  suppressions(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    const subjectIds = this.regulations
      .suppressedUsers(workspace.slug)
      .filter((user) => user.source === undefined)
      .map((user) => user.subjectId);
    const { items, pagination } = paginatePublic(subjectIds, query);
    return {
      data: {
        suppressed: items.length === 0 ? [] : [{ subjectType: 'userId', subjectIds: items }],
        pagination,
      },
    };
  }

  private async create(
    workspace: WorkspaceRecord,
    source: SourceView | undefined,
    body: Record<string, unknown>,
    metadata: EventMetadata,
  ) {
    try {
      const view = await this.regulations.create(
        {
          workspaceSlug: workspace.slug,
          source,
          regulationType: body.regulationType,
          subjectType: body.subjectType,
          subjectIds: body.subjectIds,
          acceptAliases: false,
        },
        metadata,
      );
      return { data: { regulateId: view.regulation.regulationId } };
    } catch (error) {
      if (error instanceof RegulationRequestError)
        throw PublicApiError.validation(error.message, error.field);
      throw error;
    }
  }

  private list(workspace: WorkspaceRecord, source: SourceView | undefined, query: PublicQuery) {
    const regulations = this.regulations.list(workspace.slug, {
      sourceId: source?.source.sourceId,
      statuses: statusFilter(query),
      regulationTypes: regulationTypesFilter(query),
    });
    const { items, pagination } = paginatePublic(regulations, query);
    return { data: { regulations: items.map(presentPublicRegulationListEntry), pagination } };
  }

  private lookup(workspace: WorkspaceRecord, regulateId: string): RegulationView {
    const view = this.regulations.get(workspace.slug, regulateId);
    if (!view) throw PublicApiError.notFound();
    return view;
  }
}

/** `status=FINISHED`: one status, by its Public name. */
function statusFilter(query: PublicQuery): RegulationStatus[] {
  const name = queryValue(query, 'status');
  if (name === undefined || name === '') return [];
  const status = REGULATION_STATUSES.find((candidate) => candidate === name);
  if (!status) {
    throw PublicApiError.validation(
      `unknown status ${JSON.stringify(name)}; expected one of ${REGULATION_STATUSES.join(', ')}`,
      'status',
    );
  }
  return [status];
}

/** `regulationTypes` in any of the array forms: `regulationTypes.0`, `regulationTypes[0]`, repeated. */
function regulationTypesFilter(query: PublicQuery): RegulationType[] {
  const names = [...query]
    .filter(([key]) => key === 'regulationTypes' || /^regulationTypes\.\d+$/.test(key))
    .flatMap(([, values]) => values);
  return names.map((name) => {
    const type = regulationTypeNamed(name, false);
    if (!type) {
      throw PublicApiError.validation(`unknown regulation type ${JSON.stringify(name)}`, 'regulationTypes');
    }
    return type;
  });
}
