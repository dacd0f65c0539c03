import { Body, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  AcceptsBodiesUpTo,
  ChangeMetadata,
  ConfigApiController,
  ConfigApiError,
  SourceInPath,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import {
  RegulationRequestError,
  RegulationStatus,
  RegulationType,
  regulationTypeNamed,
  WorkspaceRecord,
} from '@tributary/config-domain';
import type { RegulationView, SourceView } from '@tributary/config-projections';
import { CreateRegulationRequestSchema, regulationName } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { RegulationCommands } from './regulation.commands';
import { presentRegulation, presentSuppressedUser, V1BETA_REGULATION_FIELDS } from './regulation.presenter';

class CreateRegulationDto extends createZodDto(CreateRegulationRequestSchema) {}

/** 5,000 ids of 1,024 characters and their JSON (docs/regulations.md §1). */
const REGULATION_BODY_BYTES = 6 * 1024 * 1024;

const STATUSES: readonly RegulationStatus[] = [
  'INITIALIZED',
  'RUNNING',
  'FINISHED',
  'PARTIAL_SUCCESS',
  'FAILED',
  'INVALID',
  'NOT_SUPPORTED',
];

const SUBJECT_TYPES: Readonly<Record<string, string>> = {
  userid: 'USER_ID',
  user_id: 'USER_ID',
  anonymousid: 'ANONYMOUS_ID',
  anonymous_id: 'ANONYMOUS_ID',
  object_id: 'OBJECT_ID',
  objectid: 'OBJECT_ID',
};

interface ListRegulationsQuery extends PageRequest {
  status?: string | string[];
  regulation_types?: string | string[];
}

/**
 * Privacy regulations of a workspace or of one of its sources (docs/regulations.md): suppress users
 * at ingest, delete what Tributary keeps about them, forward the deletion. The router runs the
 * deletions; statuses move on as it works. What a request does is `RegulationCommands`'.
 */
@ApiTags('regulations')
@ConfigApiController('v1beta/workspaces/:workspace')
export class RegulationsController {
  constructor(private readonly regulations: RegulationCommands) {}

  // `regulation` is an older spelling in Segment's docs.
  @Post(['regulations', 'regulation'])
  @AcceptsBodiesUpTo(REGULATION_BODY_BYTES)
  createForWorkspace(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Body() body: CreateRegulationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.create(workspace, undefined, body, metadata);
  }

  @Post('sources/:source/regulations')
  @AcceptsBodiesUpTo(REGULATION_BODY_BYTES)
  createForSource(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @SourceInPath() source: SourceView,
    @Body() body: CreateRegulationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.create(workspace, source, body, metadata);
  }

  @Get(['regulations', 'regulation'])
  listForWorkspace(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: ListRegulationsQuery) {
    return this.list(workspace, undefined, query);
  }

  @Get('sources/:source/regulations')
  listForSource(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @SourceInPath() source: SourceView,
    @Query() query: ListRegulationsQuery,
  ) {
    return this.list(workspace, source, query);
  }

  @Get('regulations/:regulation')
  get(@WorkspaceInPath() workspace: WorkspaceRecord, @Param('regulation') regulationId: string) {
    return presentRegulation(workspace.id, this.lookup(workspace, regulationId));
  }

  @Delete('regulations/:regulation')
  async cancel(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('regulation') regulationId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.regulations.cancel(this.lookup(workspace, regulationId), metadata);
    return {};
  }

  @Get('suppressed-users')
  suppressedUsers(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: PageRequest) {
    const { page, nextPageToken } = paginate(this.regulations.suppressedUsers(workspace.slug), query);
    return { suppressed_users: page.map(presentSuppressedUser), next_page_token: nextPageToken };
  }

  private async create(
    workspace: WorkspaceRecord,
    source: SourceView | undefined,
    body: CreateRegulationDto,
    metadata: EventMetadata,
  ) {
    const subjectType = SUBJECT_TYPES[body.attributes.name.toLowerCase()] ?? body.attributes.name;
    try {
      const view = await this.regulations.create(
        {
          workspaceSlug: workspace.slug,
          source,
          regulationType: body.regulation_type,
          subjectType,
          subjectIds: body.attributes.values,
          acceptAliases: true,
        },
        metadata,
      );
      return presentRegulation(workspace.id, view);
    } catch (error) {
      if (error instanceof RegulationRequestError) {
        throw ConfigApiError.invalidArgument(`${V1BETA_REGULATION_FIELDS[error.field]}: ${error.message}`);
      }
      throw error;
    }
  }

  private list(workspace: WorkspaceRecord, source: SourceView | undefined, query: ListRegulationsQuery) {
    const regulations = this.regulations.list(workspace.slug, {
      sourceId: source?.source.sourceId,
      statuses: valuesOf(query.status, 'status').map(statusNamed),
      regulationTypes: valuesOf(query.regulation_types, 'regulation_types').map(regulationTypeFilter),
    });
    const { page, nextPageToken } = paginate(regulations, query);
    return {
      regulations: page.map((view) => presentRegulation(workspace.id, view)),
      next_page_token: nextPageToken,
    };
  }

  private lookup(workspace: WorkspaceRecord, regulationId: string): RegulationView {
    const view = this.regulations.get(workspace.slug, regulationId);
    if (!view) {
      throw ConfigApiError.notFound(
        `${regulationName({ workspaceSlug: workspace.slug, regulationId })} not found`,
      );
    }
    return view;
  }
}

/** A filter sent as repeated keys, as one comma-separated value, or both. */
function valuesOf(raw: string | string[] | undefined, field: string): string[] {
  if (raw === undefined) return [];
  const values = Array.isArray(raw) ? raw : [raw];
  if (values.some((value) => typeof value !== 'string')) {
    throw ConfigApiError.invalidArgument(`${field} must be a list of names`);
  }
  return values
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

function statusNamed(name: string): RegulationStatus {
  const status = STATUSES.find((candidate) => candidate === name.toUpperCase());
  if (!status) {
    throw ConfigApiError.invalidArgument(
      `status: unknown status "${name}"; expected one of ${STATUSES.map((s) => s.toLowerCase()).join(', ')}`,
    );
  }
  return status;
}

function regulationTypeFilter(name: string): RegulationType {
  const type = regulationTypeNamed(name, true);
  if (!type) throw ConfigApiError.invalidArgument(`regulation_types: unknown regulation type "${name}"`);
  return type;
}
