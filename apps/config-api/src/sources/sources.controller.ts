import { ConfigApiController, ResourceLookup, ChangeMetadata } from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateSourceId, generateWriteKey } from '@tributary/auth';
import {
  resolveUpdateMask,
  SCHEMA_CONFIG_ZERO_VALUES,
  SchemaConfig,
  sourceAggregate,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  catalogSlugFromName,
  CreateSourceRequestSchema,
  UpdateSchemaConfigRequestSchema,
  UpdateSourceRequestSchema,
} from '@tributary/contracts';
import { findCatalogSource } from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment, slugUnder, workspaceName } from '../shared/resource-names';
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
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(@Param('workspace') workspaceSlug: string, @Query() query: PageRequest) {
    this.lookup.workspace(workspaceSlug);
    const sources = this.readModel
      .listSources(workspaceSlug)
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
  get(@Param('workspace') workspaceSlug: string, @Param('source') sourceSlug: string) {
    return presentSource(this.lookup.source(workspaceSlug, sourceSlug).source);
  }

  @Patch(':source')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.source(workspaceSlug, sourceSlug);
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
    return presentSource(this.lookup.source(workspaceSlug, sourceSlug).source);
  }

  @Put(':source')
  replace(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, sourceSlug, body, metadata);
  }

  @Delete(':source')
  async delete(
    @Param('workspace') workspaceSlug: string,
    @Param('source') source: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const sourceSlug = lastSegment(source);
    this.lookup.source(workspaceSlug, sourceSlug);
    await this.commands.handle(
      sourceAggregate,
      { workspaceSlug, sourceSlug },
      { type: 'DeleteSource' },
      metadata,
    );
    return {};
  }

  @Get(':source/schema-config')
  getSchemaConfig(@Param('workspace') workspaceSlug: string, @Param('source') sourceSlug: string) {
    const view = this.lookup.source(workspaceSlug, sourceSlug);
    return presentSchemaConfig(view.source, view.schemaConfig);
  }

  @Patch(':source/schema-config')
  async updateSchemaConfig(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Body() body: UpdateSchemaConfigDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.source(workspaceSlug, sourceSlug);
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
    const view = this.lookup.source(workspaceSlug, sourceSlug);
    return presentSchemaConfig(view.source, view.schemaConfig);
  }

  @Put(':source/schema-config')
  replaceSchemaConfig(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Body() body: UpdateSchemaConfigDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.updateSchemaConfig(workspaceSlug, sourceSlug, body, metadata);
  }
}
