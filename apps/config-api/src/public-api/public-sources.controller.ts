import { Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ChangeMetadata,
  ConfigApiError,
  CurrentPrincipal,
  maySeeSecrets,
  type Principal,
} from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import { SourceCommands } from '../sources/source.commands';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { paginatePublic, type PublicQuery } from './public-api-query';
import { PublicApiResources, publicTrackingPlanId } from './public-api-resources';
import { catalogSourceById } from './public-catalog.presenter';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { presentPublicDestination } from './public-destination.presenter';
import { presentPublicSource, presentSourceSettings, schemaConfigChangesOf } from './public-source.presenter';
import { mergedSettings, optionalBoolean, optionalString, settingsMap } from './public-api-input';

/** Sources (docs/public-api.md, "Sources"): the same sources, commands and events as `/v1beta`. */
@ApiTags('Sources')
@PublicApiController('sources')
export class PublicSourcesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly sources: SourceCommands,
    private readonly resources: PublicApiResources,
    private readonly catalog: DestinationCatalog,
  ) {}

  @Get()
  list(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicQueryParams() query: PublicQuery,
    @CurrentPrincipal() principal: Principal,
  ) {
    const { items, pagination } = paginatePublic(this.resources.sources(workspace), query);
    const visible = maySeeSecrets(principal);
    return {
      data: {
        sources: items.map(({ source }) => presentPublicSource(source, workspace, visible)),
        pagination,
      },
    };
  }

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const slug = body.slug;
    if (typeof slug !== 'string' || slug === '') throw PublicApiError.validation('slug is required', 'slug');
    const metadataId = body.metadataId;
    const catalogEntry = typeof metadataId === 'string' ? catalogSourceById(metadataId) : undefined;
    if (!catalogEntry) {
      throw PublicApiError.validation(
        `metadataId ${JSON.stringify(metadataId)} is not in the catalog`,
        'metadataId',
      );
    }
    const enabled = optionalBoolean(body, 'enabled');
    const settings =
      body.settings === undefined || body.settings === null ? undefined : settingsMap(body.settings);
    const name = optionalString(body, 'name');
    let sourceSlug: string;
    try {
      sourceSlug = await this.sources.create(
        workspace.slug,
        {
          name: slug,
          catalog_name: `catalog/sources/${catalogEntry.slug}`,
          ...(name && { display_name: name }),
        },
        metadata,
        { ...(enabled !== undefined && { enabled }), ...(settings && { settings }) },
      );
    } catch (error) {
      throw withField(error, 'slug');
    }
    const view = this.readModel.source(workspace.slug, sourceSlug)!;
    return { data: { source: presentPublicSource(view.source, workspace, true) } };
  }

  @Get(':id')
  get(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    const { source } = this.resources.source(workspace, id);
    const planId = this.readModel.trackingPlanIdOfSource(workspace.slug, source.sourceSlug);
    return {
      data: {
        source: presentPublicSource(source, workspace, maySeeSecrets(principal)),
        trackingPlanId: planId === undefined ? null : publicTrackingPlanId(planId),
      },
    };
  }

  /** `slug` may be sent back unchanged; changing it is refused (names in the config are built from it). */
  @Patch(':id')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    if (body.slug !== undefined && body.slug !== null && body.slug !== source.sourceSlug) {
      throw PublicApiError.validation('a source slug cannot be changed', 'slug');
    }
    const displayName = optionalString(body, 'name');
    const enabled = optionalBoolean(body, 'enabled');
    const settings =
      body.settings === undefined || body.settings === null
        ? undefined
        : mergedSettings(source.settings ?? {}, settingsMap(body.settings));
    await this.sources.change(
      workspace.slug,
      source.sourceSlug,
      {
        ...(displayName !== undefined && { displayName }),
        ...(enabled !== undefined && { enabled }),
        ...(settings !== undefined && { settings }),
      },
      metadata,
    );
    const view = this.readModel.source(workspace.slug, source.sourceSlug)!;
    return { data: { source: presentPublicSource(view.source, workspace, true) } };
  }

  @Delete(':id')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    await this.sources.delete(workspace.slug, source.sourceSlug, metadata);
    return { data: { status: 'SUCCESS' } };
  }

  @Get(':id/connected-destinations')
  connectedDestinations(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicQueryParams() query: PublicQuery,
  ) {
    const { source } = this.resources.source(workspace, id);
    const { items, pagination } = paginatePublic(
      this.resources.destinations(workspace, source.sourceId),
      query,
    );
    return {
      data: {
        destinations: items.map(({ destination }) =>
          presentPublicDestination(destination, this.catalog.entryOf(destination)),
        ),
        pagination,
      },
    };
  }

  @Get(':id/settings')
  getSettings(@PublicWorkspace() workspace: WorkspaceRecord, @Param('id') id: string) {
    const view = this.resources.source(workspace, id);
    return {
      data: { sourceId: view.source.sourceId, settings: this.settingsOf(workspace, view.source.sourceSlug) },
    };
  }

  @Patch(':id/settings')
  async updateSettings(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    const others = this.resources.sources(workspace);
    const result = schemaConfigChangesOf(
      body,
      (sourceId) => others.find((view) => view.source.sourceId === sourceId)?.source.sourceSlug,
    );
    if ('problem' in result) throw PublicApiError.validation(result.problem, result.field);
    await this.sources.updateSchemaConfig(
      workspace.slug,
      source.sourceSlug,
      { schema_config: result.changes, update_mask: { paths: Object.keys(result.changes) } },
      metadata,
    );
    return { data: { sourceId: source.sourceId, settings: this.settingsOf(workspace, source.sourceSlug) } };
  }

  /** No body, no Content-Type (the TypeScript SDK's request): one more write key, listed last. */
  @Post(':id/writekey')
  @HttpCode(200)
  async addWriteKey(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    await this.sources.addWriteKey(workspace.slug, source.sourceSlug, metadata);
    const view = this.readModel.source(workspace.slug, source.sourceSlug)!;
    return { data: { source: presentPublicSource(view.source, workspace, true) } };
  }

  /** The key stops authenticating at once; the last key of a source stays (422). */
  @Delete(':id/writekey/:writeKey')
  async removeWriteKey(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @Param('writeKey') writeKey: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    await this.sources.removeWriteKey(workspace.slug, source.sourceSlug, writeKey, metadata);
    return { data: { status: 'SUCCESS' } };
  }

  /** Adds labels of the workspace to the source; each must exist (422 otherwise). */
  @Post(':id/labels')
  @HttpCode(200)
  addLabels(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    return this.writeLabels(
      workspace,
      source.sourceSlug,
      [...(source.labels ?? []), ...readLabels(body)],
      metadata,
    );
  }

  /** Replaces the source's labels. */
  @Put(':id/labels')
  replaceLabels(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.resources.source(workspace, id);
    return this.writeLabels(workspace, source.sourceSlug, readLabels(body), metadata);
  }

  private async writeLabels(
    workspace: WorkspaceRecord,
    sourceSlug: string,
    requested: { key: string; value: string }[],
    metadata: EventMetadata,
  ) {
    const known = workspace.labels ?? [];
    const unknown = requested.find(
      (label) => !known.some((candidate) => candidate.key === label.key && candidate.value === label.value),
    );
    if (unknown) {
      throw PublicApiError.validation(
        `label ${unknown.key}:${unknown.value} does not exist in the workspace`,
        'labels',
      );
    }
    const labels = requested.filter(
      (label, index) =>
        requested.findIndex((other) => other.key === label.key && other.value === label.value) === index,
    );
    await this.sources.change(workspace.slug, sourceSlug, { labels }, metadata);
    const view = this.readModel.source(workspace.slug, sourceSlug)!;
    return { data: { labels: presentPublicSource(view.source, workspace, false).labels } };
  }

  private settingsOf(workspace: WorkspaceRecord, sourceSlug: string) {
    const view = this.readModel.source(workspace.slug, sourceSlug)!;
    return presentSourceSettings(
      view.schemaConfig,
      (slug) => this.readModel.source(workspace.slug, slug)?.source.sourceId,
    );
  }
}

/** `{labels: [{key, value}]}` of a request. */
function readLabels(body: Record<string, unknown>): { key: string; value: string }[] {
  if (!Array.isArray(body.labels)) throw PublicApiError.validation('labels must be a list', 'labels');
  return body.labels.map((label: unknown) => {
    const { key, value } = (typeof label === 'object' && label !== null ? label : {}) as Record<
      string,
      unknown
    >;
    if (typeof key !== 'string' || typeof value !== 'string') {
      throw PublicApiError.validation('each label is {key, value}', 'labels');
    }
    return { key, value };
  });
}

/** A refusal of the request's values (v1beta's 400) names the field it is about. */
function withField(error: unknown, field: string): unknown {
  if (error instanceof ConfigApiError && error.status === 400)
    return PublicApiError.validation(error.message, field);
  return error;
}
