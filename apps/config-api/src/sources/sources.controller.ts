import {
  ChangeMetadata,
  ConfigApiController,
  CurrentPrincipal,
  maySeeSecrets,
  type Principal,
  ResourceLookup,
  SourceInPath,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Inject, Param, Patch, Post, Put, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { SourceRecord, WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel, SourceView } from '@tributary/config-projections';
import {
  CreateSourceRequestSchema,
  UpdateSchemaConfigRequestSchema,
  UpdateSourceRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { FastifyRequest } from 'fastify';
import { createZodDto } from 'nestjs-zod';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { paginate, PageRequest } from '../shared/pagination';
import { SourceCommands } from './source.commands';
import { presentSchemaConfig, presentSource, publicBaseUrl } from './source.presenter';

class CreateSourceDto extends createZodDto(CreateSourceRequestSchema) {}
class UpdateSchemaConfigDto extends createZodDto(UpdateSchemaConfigRequestSchema) {}
class UpdateSourceDto extends createZodDto(UpdateSourceRequestSchema) {}

/**
 * Sources are created, read and deleted; no Segment client updates one (docs/config-api.md §2.4). Tributary's one
 * updatable field, `allowed_origins` (browser sources), has PATCH and PUT on the source. What a request
 * does is `SourceCommands`'.
 */
@ApiTags('sources')
@ConfigApiController('v1beta/workspaces/:workspace/sources')
export class SourcesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly sources: SourceCommands,
    private readonly lookup: ResourceLookup,
    private readonly catalog: DestinationCatalog,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  @Get()
  list(
    @WorkspaceInPath() workspace: WorkspaceRecord,
    @Query() query: PageRequest,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
  ) {
    const sources = this.readModel
      .listSources(workspace.slug)
      .sort((a, b) => a.source.sourceSlug.localeCompare(b.source.sourceSlug));
    const { page, nextPageToken } = paginate(sources, query);
    const visible = maySeeSecrets(principal);
    return {
      sources: page.map((view) => this.present(view.source, request, visible)),
      next_page_token: nextPageToken,
    };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Body() body: CreateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
    @Req() request: FastifyRequest,
  ) {
    const sourceSlug = await this.sources.create(workspaceSlug, body.source, metadata);
    return this.present(this.lookup.source(workspaceSlug, sourceSlug).source, request, true);
  }

  @Get(':source')
  get(
    @SourceInPath() { source }: SourceView,
    @Req() request: FastifyRequest,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.present(source, request, maySeeSecrets(principal));
  }

  @Patch(':source')
  async update(
    @SourceInPath() { source }: SourceView,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
    @Req() request: FastifyRequest,
  ) {
    const { workspaceSlug, sourceSlug } = source;
    await this.sources.update(source, body, metadata);
    return this.present(this.lookup.source(workspaceSlug, sourceSlug).source, request, true);
  }

  @Put(':source')
  replace(
    @SourceInPath() view: SourceView,
    @Body() body: UpdateSourceDto,
    @ChangeMetadata() metadata: EventMetadata,
    @Req() request: FastifyRequest,
  ) {
    return this.update(view, body, metadata, request);
  }

  @Delete(':source')
  async delete(
    @SourceInPath({ acceptFullName: true }) { source: { workspaceSlug, sourceSlug } }: SourceView,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.sources.delete(workspaceSlug, sourceSlug, metadata);
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
    await this.sources.updateSchemaConfig(workspaceSlug, sourceSlug, body, metadata);
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

  /** `writeKeysVisible`: the caller may write (see `presentSource`). */
  private present(source: SourceRecord, request: FastifyRequest, writeKeysVisible: boolean) {
    if (source.functionId === undefined) return presentSource(source, writeKeysVisible);
    return presentSource(source, writeKeysVisible, {
      entry: this.catalog.functionEntry(source.workspaceSlug, source.functionId, 'SOURCE'),
      baseUrl: publicBaseUrl(this.environment.PUBLIC_BASE_URL, request),
    });
  }
}
