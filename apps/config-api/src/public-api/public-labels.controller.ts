import { Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ChangeMetadata } from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import { WorkspaceCommands } from '../workspaces/workspace.commands';
import { PublicApiController, PublicBody, PublicWorkspace } from './public-api-controller.decorator';
import { optionalString, requiredString, settingsMap } from './public-api-input';

/** The workspace's labels (docs/public-api.md, "Labels"); sources carry them. */
@ApiTags('Labels')
@PublicApiController('labels')
export class PublicLabelsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly workspaces: WorkspaceCommands,
  ) {}

  @Get()
  list(@PublicWorkspace() workspace: WorkspaceRecord) {
    return { data: { labels: workspace.labels ?? [] } };
  }

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const input = settingsMap(body.label, 'label');
    const key = requiredString(input, 'key');
    const value = requiredString(input, 'value');
    const description = optionalString(input, 'description');
    await this.workspaces.createLabel(
      workspace.slug,
      { key, value, ...(description !== undefined && { description }) },
      metadata,
    );
    const label = this.readModel
      .workspace(workspace.slug)!
      .labels!.find((candidate) => candidate.key === key && candidate.value === value);
    return { data: { label } };
  }

  @Delete(':key/:value')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('key') key: string,
    @Param('value') value: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.workspaces.deleteLabel(workspace.slug, key, value, metadata);
    return { data: { status: 'SUCCESS' } };
  }
}
