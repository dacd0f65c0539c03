import {
  ConfigApiController,
  ConfigApiError,
  ResourceLookup,
  AllowBasicAuth,
  canReachWorkspace,
  ChangeMetadata,
  CurrentPrincipal,
  InstanceAdminOnly,
  Principal,
} from '@tributary/config-api-access';
import { Body, Get, Inject, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { ApiTags } from '@nestjs/swagger';
import { generateWorkspaceId } from '@tributary/auth';
import { resolveUpdateMask, workspaceAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import { CreateWorkspaceRequestSchema, UpdateWorkspaceRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment } from '../shared/resource-names';
import { presentWorkspace } from './workspace.presenter';

class CreateWorkspaceDto extends createZodDto(CreateWorkspaceRequestSchema) {}
class UpdateWorkspaceDto extends createZodDto(UpdateWorkspaceRequestSchema) {}

@ApiTags('workspaces')
@ConfigApiController('v1beta/workspaces')
export class WorkspacesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /**
   * The workspaces the caller can reach; typewriter treats an empty list as an invalid token. Basic
   * credentials are accepted too, so a user signing in (the console) can name the workspaces of the
   * token it then mints.
   */
  @Get()
  @AllowBasicAuth()
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageRequest) {
    const reachable = this.readModel
      .listWorkspaces()
      .filter((workspace) => canReachWorkspace(principal, workspace.slug))
      .sort((a, b) => a.slug.localeCompare(b.slug));
    const { page, nextPageToken } = paginate(reachable, query);
    return { workspaces: page.map(presentWorkspace), next_page_token: nextPageToken };
  }

  @Get(':workspace')
  get(@Param('workspace') workspaceSlug: string) {
    return presentWorkspace(this.lookup.workspace(workspaceSlug));
  }

  @Post()
  @InstanceAdminOnly()
  async create(@Body() body: CreateWorkspaceDto, @ChangeMetadata() metadata: EventMetadata) {
    const slug = lastSegment(body.workspace.name);
    await this.commands.handle(
      workspaceAggregate,
      slug,
      {
        type: 'CreateWorkspace',
        workspace: {
          slug,
          id: generateWorkspaceId(),
          displayName: body.workspace.display_name ?? slug,
          region: body.workspace.region ?? this.environment.TRIBUTARY_REGION,
          createTime: metadata.time,
        },
      },
      metadata,
    );
    return presentWorkspace(this.lookup.workspace(slug));
  }

  @Put(':workspace')
  replace(
    @Param('workspace') workspaceSlug: string,
    @Body() body: UpdateWorkspaceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, body, metadata);
  }

  @Patch(':workspace')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Body() body: UpdateWorkspaceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.workspace(workspaceSlug);
    const changes = resolveUpdateMask('workspace', body.workspace, body.update_mask?.paths ?? undefined, {
      display_name: '',
      oauth_required: false,
    });
    if (changes.display_name === '')
      throw ConfigApiError.invalidArgument('workspace.display_name must not be empty');
    await this.commands.handle(
      workspaceAggregate,
      workspaceSlug,
      {
        type: 'UpdateWorkspace',
        changes: {
          displayName: changes.display_name as string | undefined,
          oauthRequired: changes.oauth_required as boolean | undefined,
        },
      },
      metadata,
    );
    return presentWorkspace(this.lookup.workspace(workspaceSlug));
  }
}
