import {
  ChangeMetadata,
  ConfigApiController,
  ResourceLookup,
  SourceInPath,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateSourceId, generateWriteKey } from '@tributary/auth';
import {
  resolveUpdateMask,
  SCHEMA_CONFIG_ZERO_VALUES,
  SchemaConfig,
  WorkspaceRecord,
  sourceDecider,
  streamNames,
} from '@tributary/config-domain';
import { CommandRunner, ConfigReadModel, SourceView } from '@tributary/config-projections';
import {
  catalogSlugFromName,
  CreateSourceRequestSchema,
  UpdateSchemaConfigRequestSchema,
  UpdateSourceRequestSchema,
  workspaceName,
} from '@tributary/contracts';
import { findCatalogSource } from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { paginate, PageRequest } from '../shared/pagination';
import { slugUnder } from '../shared/resource-names';
import { presentSchemaConfig, presentSource } from './source.presenter';

class CreateSourceDto extends createZodDto(CreateSourceRequestSchema) {}
class UpdateSchemaConfigDto extends createZodDto(UpdateSchemaConfigRequestSchema) {}
class UpdateSourceDto extends createZodDto(UpdateSourceRequestSchema) {}

/**
 * Sources are created, read and deleted; no Segment client updates one (docs/config-api.md §2.4). Tributary's one
 * updatable field, `allowed_origins` (browser sources), has PATCH and PUT on the source.
 */
@ApiTags('sources')
@ConfigApiController('v1beta/workspaces/:workspace/sources')
export class SourcesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: CommandRunner,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: PageRequest) {
    const sources = this.readModel
      .listSources(workspace.slug)
      .sort((a, b) => a.source.sourceSlug.localeCompare(b.source.sourceSlug));
    const { page, nextPageToken } = paginate(sources, query);
    return { sources: page.map((view) => presentSource(view.source)), next_page_token: nextPageToken };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Body() body: CreateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const sourceSlug = slugUnder(workspaceName(workspaceSlug), 'sources', body.source.name, 'source.name');
    const catalogSlug = catalogSlugFromName(body.source.catalog_name, 'sources') ?? body.source.catalog_name;
    this.quotas.assertCanAddSource(workspaceSlug);
    await this.commands.execute(
      streamNames.source(workspaceSlug, sourceSlug),
      sourceDecider,
      {
        type: 'CreateSource',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        catalogSourceExists: Boolean(findCatalogSource(catalogSlug)),
        source: {
          workspaceSlug,
          sourceSlug,
          sourceId: generateSourceId(),
          catalogName: `catalog/sources/${catalogSlug}`,
          displayName: body.source.display_name ?? sourceSlug,
          writeKey: generateWriteKey(),
          createTime: metadata.time,
          ...(body.source.allowed_origins && { allowedOrigins: body.source.allowed_origins }),
        },
      },
      metadata,
    );
    return presentSource(this.lookup.source(workspaceSlug, sourceSlug).source);
  }

  @Get(':source')
  get(@SourceInPath() { source }: SourceView) {
    return presentSource(source);
  }

  @Patch(':source')
  async update(
    @SourceInPath() { source: { workspaceSlug, sourceSlug } }: SourceView,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const changes = resolveUpdateMask('source', body.source, body.update_mask?.paths ?? undefined, {
      allowed_origins: [],
    }) as { allowed_origins?: string[] };
    await this.commands.execute(
      streamNames.source(workspaceSlug, sourceSlug),
      sourceDecider,
      {
        type: 'UpdateSource',
        changes: changes.allowed_origins === undefined ? {} : { allowedOrigins: changes.allowed_origins },
      },
      metadata,
    );
    return presentSource(this.lookup.source(workspaceSlug, sourceSlug).source);
  }

  @Put(':source')
  replace(
    @SourceInPath() view: SourceView,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(view, body, metadata);
  }

  @Delete(':source')
  async delete(
    @SourceInPath({ acceptFullName: true }) { source: { workspaceSlug, sourceSlug } }: SourceView,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.commands.execute(
      streamNames.source(workspaceSlug, sourceSlug),
      sourceDecider,
      { type: 'DeleteSource' },
      metadata,
    );
    return {};
  }

  @Get(':source/schema-config')
  getSchemaConfig(@SourceInPath() view: SourceView) {
    return presentSchemaConfig(view.source, view.schemaConfig);
  }

  @Patch(':source/schema-config')
  async updateSchemaConfig(
    @SourceInPath() { source: { workspaceSlug, sourceSlug } }: SourceView,
    @Body() body: UpdateSchemaConfigDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const changes = resolveUpdateMask(
      'schema_config',
      body.schema_config ?? {},
      body.update_mask?.paths ?? undefined,
      SCHEMA_CONFIG_ZERO_VALUES,
    ) as Partial<SchemaConfig>;
    await this.commands.execute(
      streamNames.source(workspaceSlug, sourceSlug),
      sourceDecider,
      {
        type: 'UpdateSchemaConfig',
        changes,
        workspaceSourceSlugs: this.readModel
          .listSources(workspaceSlug)
          .map((source) => source.source.sourceSlug),
      },
      metadata,
    );
    const view = this.lookup.source(workspaceSlug, sourceSlug);
    return presentSchemaConfig(view.source, view.schemaConfig);
  }

  @Put(':source/schema-config')
  replaceSchemaConfig(
    @SourceInPath() view: SourceView,
    @Body() body: UpdateSchemaConfigDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.updateSchemaConfig(view, body, metadata);
  }
}
