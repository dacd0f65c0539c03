import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { OAuthApplicationRecord, WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  CreateOAuthApplicationRequestSchema,
  UpdateOAuthApplicationRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import {
  ChangeMetadata,
  ConfigApiController,
  OAuthApplicationInPath,
  ResourceLookup,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { paginate, PageRequest } from '../shared/pagination';
import { OAuthApplicationCommands } from './oauth-application.commands';
import { presentOAuthApplication } from './oauth-application.presenter';

class CreateOAuthApplicationDto extends createZodDto(CreateOAuthApplicationRequestSchema) {}
class UpdateOAuthApplicationDto extends createZodDto(UpdateOAuthApplicationRequestSchema) {}

/**
 * OAuth applications of a workspace: each holds the public keys that verify its client assertions
 * at the tracking API's `/token`. Keys are added or removed by updating `public_keys` with a mask;
 * a key already registered may be named by its `key_id` alone. What a change does is
 * `OAuthApplicationCommands`'.
 */
@ApiTags('oauth applications')
@ConfigApiController('v1beta/workspaces/:workspace/oauth-applications')
export class OAuthApplicationsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly applications: OAuthApplicationCommands,
    private readonly lookup: ResourceLookup,
  ) {}

  @Get()
  list(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: PageRequest) {
    const applications = this.readModel
      .listOAuthApplications(workspace.slug)
      .sort((a, b) => a.createTime.localeCompare(b.createTime));
    const { page, nextPageToken } = paginate(applications, query);
    return { oauth_applications: page.map(presentOAuthApplication), next_page_token: nextPageToken };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Body() body: CreateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const applicationId = await this.applications.create(workspaceSlug, body.oauth_application, metadata);
    return presentOAuthApplication(this.lookup.oauthApplication(workspaceSlug, applicationId));
  }

  @Get(':application')
  get(@OAuthApplicationInPath() application: OAuthApplicationRecord) {
    return presentOAuthApplication(application);
  }

  @Patch(':application')
  async update(
    @OAuthApplicationInPath() current: OAuthApplicationRecord,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { workspaceSlug, applicationId } = current;
    await this.applications.update(current, body, metadata);
    return presentOAuthApplication(this.lookup.oauthApplication(workspaceSlug, applicationId));
  }

  @Put(':application')
  replace(
    @OAuthApplicationInPath() current: OAuthApplicationRecord,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(current, body, metadata);
  }

  @Delete(':application')
  async delete(
    @OAuthApplicationInPath({ acceptFullName: true }) application: OAuthApplicationRecord,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.applications.delete(application, metadata);
    return {};
  }
}
