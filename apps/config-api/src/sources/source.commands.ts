import { Injectable } from '@nestjs/common';
import { generateSourceId, generateWriteKey } from '@tributary/auth';
import {
  resolveUpdateMask,
  SCHEMA_CONFIG_ZERO_VALUES,
  SchemaConfig,
  SourceChanges,
  sourceAggregate,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  catalogSlugFromName,
  type CreateSourceRequest,
  type UpdateSchemaConfigRequest,
  type UpdateSourceRequest,
  workspaceName,
} from '@tributary/contracts';
import { findCatalogSource } from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { slugUnder } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

/**
 * The source use cases of the Config API, apart from HTTP: the slug read from the name, the catalog
 * entry, the ids and write key a new source gets, what an update mask changes, and the check of a
 * schema config's forwarding targets against the workspace's other sources. Each ends in one command
 * of the source's aggregate; its caller reads the result back from the read model.
 */
@Injectable()
export class SourceCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  /**
   * Creates the source named in the request and answers its slug; `extra` holds what only the Public
   * API sets at creation.
   */
  async create(
    workspaceSlug: string,
    request: CreateSourceRequest['source'],
    metadata: EventMetadata,
    extra: Pick<SourceChanges, 'enabled' | 'settings'> = {},
  ): Promise<string> {
    const sourceSlug = slugUnder(workspaceName(workspaceSlug), 'sources', request.name, 'source.name');
    const catalogSlug = catalogSlugFromName(request.catalog_name, 'sources') ?? request.catalog_name;
    this.quotas.assertCanAddSource(workspaceSlug);
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      {
        type: 'CreateSource',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        catalogSourceExists: Boolean(findCatalogSource(catalogSlug)),
        source: {
          workspaceSlug,
          sourceSlug,
          sourceId: generateSourceId(),
          catalogName: `catalog/sources/${catalogSlug}`,
          displayName: request.display_name ?? sourceSlug,
          writeKey: generateWriteKey(),
          createTime: metadata.time,
          ...(request.allowed_origins && { allowedOrigins: request.allowed_origins }),
          ...(extra.enabled !== undefined && { enabled: extra.enabled }),
          ...(extra.settings !== undefined && { settings: extra.settings }),
        },
      },
      metadata,
    );
    return sourceSlug;
  }

  /** `allowed_origins` is the one field a source update changes (docs/config-api.md §2.4). */
  async update(
    workspaceSlug: string,
    sourceSlug: string,
    body: UpdateSourceRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const changes = resolveUpdateMask('source', body.source, body.update_mask?.paths ?? undefined, {
      allowed_origins: [],
    }) as { allowed_origins?: string[] };
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      {
        type: 'UpdateSource',
        changes: changes.allowed_origins === undefined ? {} : { allowedOrigins: changes.allowed_origins },
      },
      metadata,
    );
  }

  /** Changes the source's own fields, as the Public API's PATCH names them (`settings` whole). */
  async change(
    workspaceSlug: string,
    sourceSlug: string,
    changes: SourceChanges,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      { type: 'UpdateSource', changes },
      metadata,
    );
  }

  /** Adds a newly generated write key to the source (Public API). */
  async addWriteKey(workspaceSlug: string, sourceSlug: string, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      { type: 'AddWriteKey', writeKey: generateWriteKey() },
      metadata,
    );
  }

  async removeWriteKey(
    workspaceSlug: string,
    sourceSlug: string,
    writeKey: string,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      { type: 'RemoveWriteKey', writeKey },
      metadata,
    );
  }

  async delete(workspaceSlug: string, sourceSlug: string, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      { type: 'DeleteSource' },
      metadata,
    );
  }

  /** Forwarding targets must be other sources of the workspace, read from the read model. */
  async updateSchemaConfig(
    workspaceSlug: string,
    sourceSlug: string,
    body: UpdateSchemaConfigRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const changes = resolveUpdateMask(
      'schema_config',
      body.schema_config ?? {},
      body.update_mask?.paths ?? undefined,
      SCHEMA_CONFIG_ZERO_VALUES,
    ) as Partial<SchemaConfig>;
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      {
        type: 'UpdateSchemaConfig',
        changes,
        workspaceSourceSlugs: this.readModel
          .listSources(workspaceSlug)
          .map((source) => source.source.sourceSlug),
      },
      metadata,
    );
  }
}
