import { Inject, Injectable } from '@nestjs/common';
import { generateWorkspaceId } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import {
  type LabelRecord,
  resolveUpdateMask,
  sourceAggregate,
  workspaceAggregate,
} from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { type CreateWorkspaceRequest, lastSegment, type UpdateWorkspaceRequest } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { Environment, ENVIRONMENT } from '@tributary/platform';

/**
 * The workspace use cases of the Config API, apart from HTTP (and from who may call them, the
 * controller's check): the slug read from the name, the workspace's id, the deployment's region
 * unless another is asked for, and what an update mask changes. Each ends in one command of the
 * workspace's aggregate; its caller reads the result back from the read model.
 */
@Injectable()
export class WorkspaceCommands {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly readModel: ConfigReadModel,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** Creates the workspace named in the request and answers its slug. */
  async create(request: CreateWorkspaceRequest['workspace'], metadata: EventMetadata): Promise<string> {
    const slug = lastSegment(request.name);
    await this.commands.handle(
      workspaceAggregate,
      slug,
      {
        type: 'CreateWorkspace',
        workspace: {
          slug,
          id: generateWorkspaceId(),
          displayName: request.display_name ?? slug,
          region: request.region ?? this.environment.TRIBUTARY_REGION,
          createTime: metadata.time,
        },
      },
      metadata,
    );
    return slug;
  }

  async update(workspaceSlug: string, body: UpdateWorkspaceRequest, metadata: EventMetadata): Promise<void> {
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
  }

  /** Adds a label to the workspace (Public API). */
  async createLabel(workspaceSlug: string, label: LabelRecord, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(workspaceAggregate, workspaceSlug, { type: 'CreateLabel', label }, metadata);
  }

  /** Removes a label from the workspace, then from every source that carries it. */
  async deleteLabel(
    workspaceSlug: string,
    key: string,
    value: string,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.commands.handle(
      workspaceAggregate,
      workspaceSlug,
      { type: 'DeleteLabel', key, value },
      metadata,
    );
    for (const { source } of this.readModel.listSources(workspaceSlug)) {
      const labels = source.labels ?? [];
      const kept = labels.filter((label) => !(label.key === key && label.value === value));
      if (kept.length === labels.length) continue;
      await this.commands.handle(
        sourceAggregate,
        { workspaceSlug, sourceSlug: source.sourceSlug },
        { type: 'UpdateSource', changes: { labels: kept } },
        metadata,
      );
    }
  }
}
