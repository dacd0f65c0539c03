import { Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ChangeMetadata } from '@tributary/config-api-access';
import { FUNCTION_KINDS, FunctionDraft, FunctionKind, WorkspaceRecord } from '@tributary/config-domain';
import type { FunctionView } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import { FunctionCommands } from '../functions/function.commands';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { paginatePublic, type PublicQuery, queryValue } from './public-api-query';
import {
  presentPublicFunction,
  presentPublicFunctionListItem,
  presentPublicFunctionVersion,
} from './public-function.presenter';

/**
 * Functions (docs/functions.md §1, the Public API paragraph): the functions `/v1beta` serves, by the
 * same use cases (`FunctionCommands`), in Segment's names. The token's one workspace is the scope;
 * another workspace's function id is not found.
 */
@ApiTags('Functions')
@PublicApiController('functions')
export class PublicFunctionsController {
  constructor(private readonly functions: FunctionCommands) {}

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const kind = publicKindNamed(body.resourceType, { required: true })!;
    const draft: FunctionDraft = {
      displayName: text(body.displayName, 'displayName') ?? '',
      description: text(body.description, 'description') ?? '',
      logoUrl: text(body.logoUrl, 'logoUrl') ?? '',
      code: text(body.code, 'code') ?? '',
      settings: body.settings,
    };
    const view = await this.functions.create(workspace, kind, draft, metadata);
    return { data: { function: presentPublicFunction(view) } };
  }

  @Get()
  list(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    const kind = publicKindNamed(queryValue(query, 'resourceType'), { required: false });
    const { items, pagination } = paginatePublic(this.functions.list(workspace.slug, kind), query);
    return { data: { functions: items.map(presentPublicFunctionListItem), pagination } };
  }

  @Get(':functionId')
  get(@PublicWorkspace() workspace: WorkspaceRecord, @Param('functionId') functionId: string) {
    return { data: { function: presentPublicFunction(this.lookup(workspace, functionId)) } };
  }

  /** The fields present are written; `code` or `settings` make a new version, run once deployed. */
  @Patch(':functionId')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup(workspace, functionId);
    const changes: Partial<FunctionDraft> = {};
    for (const [field, key] of [
      ['displayName', 'displayName'],
      ['description', 'description'],
      ['logoUrl', 'logoUrl'],
      ['code', 'code'],
    ] as const) {
      const value = text(body[field], field);
      if (value !== undefined) changes[key] = value;
    }
    if (body.settings !== undefined && body.settings !== null) changes.settings = body.settings;
    const updated = await this.functions.update(view, changes, metadata);
    return { data: { function: presentPublicFunction(updated) } };
  }

  @Delete(':functionId')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.functions.delete(this.lookup(workspace, functionId), metadata);
    return { data: { status: 'SUCCESS' } };
  }

  @Post(':functionId/deploy')
  @HttpCode(200)
  async deploy(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.functions.deploy(this.lookup(workspace, functionId), metadata);
    return { data: { functionDeployment: { status: 'SUCCESS' } } };
  }

  /** Newest first. */
  @Get(':functionId/versions')
  versions(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @PublicQueryParams() query: PublicQuery,
  ) {
    const view = this.lookup(workspace, functionId);
    const { items, pagination } = paginatePublic([...view.function.versions].reverse(), query);
    return {
      data: { versions: items.map((version) => presentPublicFunctionVersion(view, version)), pagination },
    };
  }

  @Get(':functionId/versions/:versionId')
  version(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @Param('versionId') versionId: string,
  ) {
    const view = this.lookup(workspace, functionId);
    const version = /^[1-9]\d{0,8}$/.test(versionId)
      ? view.function.versions.find((candidate) => candidate.version === Number(versionId))
      : undefined;
    if (!version) throw PublicApiError.notFound();
    return { data: { version: presentPublicFunctionVersion(view, version) } };
  }

  /** A new version with the code and settings of `versionId`; it runs once deployed. */
  @Post(':functionId/versions')
  @HttpCode(200)
  async restore(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('functionId') functionId: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup(workspace, functionId);
    const versionId = body.versionId;
    if (typeof versionId !== 'string' || !/^[1-9]\d{0,8}$/.test(versionId)) {
      throw PublicApiError.validation('versionId must name a version of the function, as "1"', 'versionId');
    }
    const restored = await this.functions.restore(view, Number(versionId), metadata);
    const latest = restored.function.versions[restored.function.versions.length - 1];
    return { data: { version: presentPublicFunctionVersion(restored, latest) } };
  }

  private lookup(workspace: WorkspaceRecord, functionId: string): FunctionView {
    const view = this.functions.get(workspace.slug, functionId);
    if (!view) throw PublicApiError.notFound();
    return view;
  }
}

/** A kind by its Public name, as written; `INSERT_SOURCE` is not offered. */
function publicKindNamed(raw: unknown, { required }: { required: boolean }): FunctionKind | undefined {
  if (raw === undefined || raw === null || raw === '') {
    if (!required) return undefined;
    throw PublicApiError.validation(
      `resourceType is required: one of ${FUNCTION_KINDS.join(', ')}`,
      'resourceType',
    );
  }
  const kind = FUNCTION_KINDS.find((candidate) => candidate === raw);
  if (!kind) {
    throw PublicApiError.validation(
      raw === 'INSERT_SOURCE'
        ? 'resourceType INSERT_SOURCE (source insert functions) is not supported'
        : `unknown resourceType ${JSON.stringify(raw)}; expected one of ${FUNCTION_KINDS.join(', ')}`,
      'resourceType',
    );
  }
  return kind;
}

function text(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw PublicApiError.validation(`${field} must be a string`, field);
  return value;
}
