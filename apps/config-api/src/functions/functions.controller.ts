import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ChangeMetadata,
  ConfigApiController,
  ConfigApiError,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import {
  FUNCTION_KINDS,
  FunctionDraft,
  FunctionKind,
  resolveUpdateMask,
  WorkspaceRecord,
} from '@tributary/config-domain';
import type { FunctionView } from '@tributary/config-projections';
import { CreateFunctionRequestSchema, functionName, UpdateFunctionRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { FunctionCommands } from './function.commands';
import { presentFunction, presentFunctionVersion } from './function.presenter';

class CreateFunctionDto extends createZodDto(CreateFunctionRequestSchema) {}
class UpdateFunctionDto extends createZodDto(UpdateFunctionRequestSchema) {}

interface FunctionTypeQuery extends PageRequest {
  type?: string | string[];
}

/** Updatable fields and the value each takes when masked but absent (docs/config-api.md §1.6). */
const FUNCTION_ZERO_VALUES = {
  display_name: '',
  description: '',
  logo_url: '',
  code: '',
  settings: [],
  buildpack: '',
};

/**
 * Functions of a workspace over v1beta (docs/functions.md §1): create, read, list, update (a new
 * version), deploy, versions and delete. What a request does is `FunctionCommands`'; a function id
 * of another workspace is as unknown here as an id that never existed.
 */
@ApiTags('functions')
@ConfigApiController('v1beta/workspaces/:workspace/functions')
export class FunctionsController {
  constructor(private readonly functions: FunctionCommands) {}

  @Post()
  async create(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Query() query: FunctionTypeQuery,
    @Body() body: CreateFunctionDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const kind = functionKindNamed(query.type ?? body.function.type ?? undefined, { required: true })!;
    const draft: FunctionDraft = {
      displayName: body.function.display_name ?? '',
      description: body.function.description ?? '',
      logoUrl: body.function.logo_url ?? '',
      code: body.function.code ?? '',
      settings: body.function.settings,
    };
    return presentFunction(await this.functions.create(workspace, kind, draft, metadata));
  }

  @Get()
  list(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: FunctionTypeQuery) {
    const kind = functionKindNamed(query.type, { required: false });
    const { page, nextPageToken } = paginate(this.functions.list(workspace.slug, kind), query);
    return { functions: page.map(presentFunction), next_page_token: nextPageToken };
  }

  @Get(':function')
  get(@WorkspaceInPath() workspace: WorkspaceRecord, @Param('function') functionId: string) {
    return presentFunction(this.lookup(workspace, functionId));
  }

  @Patch(':function')
  async update(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @Body() body: UpdateFunctionDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup(workspace, functionId);
    const changes = resolveUpdateMask(
      'function',
      body.function,
      body.update_mask?.paths ?? undefined,
      FUNCTION_ZERO_VALUES,
    );
    const draft: Partial<FunctionDraft> = {
      ...(changes.display_name !== undefined && { displayName: changes.display_name as string }),
      ...(changes.description !== undefined && { description: changes.description as string }),
      ...(changes.logo_url !== undefined && { logoUrl: changes.logo_url as string }),
      ...(changes.code !== undefined && { code: changes.code as string }),
      ...(changes.settings !== undefined && { settings: changes.settings }),
    };
    return presentFunction(await this.functions.update(view, draft, metadata));
  }

  @Put(':function')
  replace(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @Body() body: UpdateFunctionDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspace, functionId, body, metadata);
  }

  @Delete(':function')
  async delete(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.functions.delete(this.lookup(workspace, functionId), metadata);
    return {};
  }

  /** `/deploy` and `:deploy` alike. */
  @Post([':function/deploy', ':function/@deploy'])
  async deploy(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = await this.functions.deploy(this.lookup(workspace, functionId), metadata);
    return { deployed_version: view.function.deployedVersion };
  }

  @Get(':function/is-latest-version')
  isLatestVersion(@WorkspaceInPath() workspace: WorkspaceRecord, @Param('function') functionId: string) {
    const { function: fn } = this.lookup(workspace, functionId);
    return { is_latest: fn.deployedVersion === fn.version };
  }

  /** Newest first. */
  @Get(':function/versions')
  versions(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @Query() query: PageRequest,
  ) {
    const view = this.lookup(workspace, functionId);
    const { page, nextPageToken } = paginate([...view.function.versions].reverse(), query);
    return {
      versions: page.map((version) => presentFunctionVersion(view, version, { withCode: false })),
      next_page_token: nextPageToken,
    };
  }

  @Get(':function/versions/:version')
  version(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Param('function') functionId: string,
    @Param('version') versionText: string,
  ) {
    const view = this.lookup(workspace, functionId);
    const version = /^[1-9]\d{0,8}$/.test(versionText)
      ? view.function.versions.find((candidate) => candidate.version === Number(versionText))
      : undefined;
    if (!version)
      throw ConfigApiError.notFound(`${functionName(view.function)}/versions/${versionText} not found`);
    return presentFunctionVersion(view, version, { withCode: true });
  }

  private lookup(workspace: WorkspaceRecord, functionId: string): FunctionView {
    const view = this.functions.get(workspace.slug, functionId);
    if (!view) {
      throw ConfigApiError.notFound(
        `${functionName({ workspaceSlug: workspace.slug, functionId })} not found`,
      );
    }
    return view;
  }
}

/** A kind by its name in any case; `INSERT_SOURCE` (Segment's source insert functions) is not offered. */
export function functionKindNamed(
  raw: string | string[] | undefined,
  { required }: { required: boolean },
): FunctionKind | undefined {
  if (raw === undefined || raw === '') {
    if (!required) return undefined;
    throw ConfigApiError.invalidArgument(`type is required: one of ${FUNCTION_KINDS.join(', ')}`);
  }
  if (typeof raw !== 'string') throw ConfigApiError.invalidArgument('type must be given once');
  const upper = raw.toUpperCase();
  if (upper === 'INSERT_SOURCE') {
    throw ConfigApiError.invalidArgument('type INSERT_SOURCE (source insert functions) is not supported');
  }
  const kind = FUNCTION_KINDS.find((candidate) => candidate === upper);
  if (!kind) {
    throw ConfigApiError.invalidArgument(
      `type: unknown function type ${JSON.stringify(raw)}; expected one of ${FUNCTION_KINDS.join(', ')}`,
    );
  }
  return kind;
}
