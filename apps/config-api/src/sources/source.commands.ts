import { Injectable } from '@nestjs/common';
import { ConfigApiError } from '@tributary/config-api-access';
import { generateSourceId, generateWriteKey } from '@tributary/auth';
import {
  resolveUpdateMask,
  SCHEMA_CONFIG_ZERO_VALUES,
  SchemaConfig,
  SourceChanges,
  sourceAggregate,
  sourceFunctionSecretsOwner,
  type SourceRecord,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  type CreateSourceRequest,
  type UpdateSchemaConfigRequest,
  type UpdateSourceRequest,
  workspaceName,
} from '@tributary/contracts';
import { findCatalogSource, isFunctionId } from '@tributary/destinations';
import { catalogSlugOfName, DestinationCatalog } from '../destinations/destination-catalog';
import {
  ConfigEntryInput,
  DestinationConfigMapper,
  settingDefinitionsOf,
} from '../destinations/destination-config';
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
    private readonly catalog: DestinationCatalog,
    private readonly configMapper: DestinationConfigMapper,
  ) {}

  /**
   * Creates the source named in the request and answers its slug; `extra` holds what only the Public
   * API sets at creation. A `catalog_name` naming one of the workspace's SOURCE functions
   * (`catalog/sources/sfn_…`) makes a source function, configured by `function_config`.
   */
  async create(
    workspaceSlug: string,
    request: CreateSourceRequest['source'],
    metadata: EventMetadata,
    extra: Pick<SourceChanges, 'enabled' | 'settings'> = {},
  ): Promise<string> {
    const sourceSlug = slugUnder(workspaceName(workspaceSlug), 'sources', request.name, 'source.name');
    const catalogSlug = catalogSlugOfName(request.catalog_name, 'sources');
    this.quotas.assertCanAddSource(workspaceSlug);
    const functionEntry = isFunctionId(catalogSlug)
      ? this.catalog.requireFunctionEntry(workspaceSlug, catalogSlug, 'SOURCE', 'source.catalog_name')
      : undefined;
    if (!functionEntry && request.function_config && request.function_config.length > 0) {
      throw ConfigApiError.invalidArgument(
        'source.function_config: only a source function (catalog_name catalog/sources/sfn_…) has one',
      );
    }
    const sourceId = generateSourceId();
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      {
        type: 'CreateSource',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        catalogSourceExists: functionEntry !== undefined || Boolean(findCatalogSource(catalogSlug)),
        ...(functionEntry && { functionSettings: settingDefinitionsOf(functionEntry) }),
        source: {
          workspaceSlug,
          sourceSlug,
          sourceId,
          catalogName: `catalog/sources/${catalogSlug}`,
          displayName: request.display_name ?? sourceSlug,
          writeKey: generateWriteKey(),
          createTime: metadata.time,
          ...(request.allowed_origins && { allowedOrigins: request.allowed_origins }),
          ...(extra.enabled !== undefined && { enabled: extra.enabled }),
          ...(extra.settings !== undefined && { settings: extra.settings }),
          ...(functionEntry && {
            functionId: functionEntry.slug,
            functionConfig: this.configMapper.toSettingValues(
              request.function_config ?? [],
              functionEntry,
              sourceFunctionSecretsOwner({ sourceId }),
              undefined,
              'source.function_config',
            ),
          }),
        },
      },
      metadata,
    );
    return sourceSlug;
  }

  /**
   * `allowed_origins` is the field a source update changes (docs/config-api.md §2.4), and a source
   * function's `function_config`, whose entries merge into the stored values by name.
   */
  async update(source: SourceRecord, body: UpdateSourceRequest, metadata: EventMetadata): Promise<void> {
    const changes = resolveUpdateMask('source', body.source, body.update_mask?.paths ?? undefined, {
      allowed_origins: [],
      function_config: [],
    }) as { allowed_origins?: string[]; function_config?: ConfigEntryInput[] };
    const functionChanges = this.functionConfigChanges(source, changes.function_config);
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug: source.workspaceSlug, sourceSlug: source.sourceSlug },
      {
        type: 'UpdateSource',
        changes: {
          ...(changes.allowed_origins !== undefined && { allowedOrigins: changes.allowed_origins }),
          ...(functionChanges && { functionConfig: functionChanges.functionConfig }),
        },
        ...(functionChanges && { functionSettings: functionChanges.functionSettings }),
      },
      metadata,
    );
  }

  /**
   * The whole function config after `entries` merged into the stored one, with the settings it is
   * checked against; nothing for no entries on a source that runs no function (a client echoing the
   * source back).
   */
  private functionConfigChanges(source: SourceRecord, entries: ConfigEntryInput[] | undefined) {
    if (entries === undefined) return undefined;
    if (source.functionId === undefined) {
      if (entries.length === 0) return undefined;
      throw ConfigApiError.invalidArgument(
        `source.function_config: ${source.sourceSlug} runs no function, so it has no function config`,
      );
    }
    const entry = this.catalog.requireFunctionEntry(
      source.workspaceSlug,
      source.functionId,
      'SOURCE',
      'source.catalog_name',
    );
    const current = { config: source.functionConfig ?? {} };
    const values = this.configMapper.toSettingValues(
      entries,
      entry,
      sourceFunctionSecretsOwner(source),
      current,
      'source.function_config',
    );
    const functionConfig = { ...current.config, ...values };
    this.quotas.assertWithinConfigBytes(source.workspaceSlug, functionConfig, current.config);
    return { functionConfig, functionSettings: settingDefinitionsOf(entry) };
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
