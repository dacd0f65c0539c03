import {
  ConfigApiController,
  ResourceLookup,
  AllowBasicAuth,
  canReachWorkspace,
  ChangeMetadata,
  CurrentPrincipal,
  InstanceAdminOnly,
  Principal,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { Body, Get, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { CreateWorkspaceRequestSchema, UpdateWorkspaceRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { WorkspaceCommands } from './workspace.commands';
import { presentWorkspace } from './workspace.presenter';

class CreateWorkspaceDto extends createZodDto(CreateWorkspaceRequestSchema) {}
class UpdateWorkspaceDto extends createZodDto(UpdateWorkspaceRequestSchema) {}

@ApiTags('workspaces')
@ConfigApiController('v1beta/workspaces')
export class WorkspacesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly workspaces: WorkspaceCommands,
    private readonly lookup: ResourceLookup,
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
  get(@WorkspaceInPath() workspace: WorkspaceRecord) {
    return presentWorkspace(workspace);
  }

  @Post()
  @InstanceAdminOnly()
  async create(@Body() body: CreateWorkspaceDto, @ChangeMetadata() metadata: EventMetadata) {
    const slug = await this.workspaces.create(body.workspace, metadata);
    return presentWorkspace(this.lookup.workspace(slug));
  }

  @Put(':workspace')
  replace(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Body() body: UpdateWorkspaceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspace, body, metadata);
  }

  @Patch(':workspace')
  async update(
    @WorkspaceInPath() { slug: workspaceSlug }: WorkspaceRecord,
    @Body() body: UpdateWorkspaceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.workspaces.update(workspaceSlug, body, metadata);
    return presentWorkspace(this.lookup.workspace(workspaceSlug));
  }
}
