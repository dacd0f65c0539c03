import { Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ChangeMetadata } from '@tributary/config-api-access';
import type { DestinationRecord, InsertFunctionRecord, WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { type CatalogDestinationDefinition, secrecyOfSetting } from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { presentSettingValue } from '../destinations/destination.presenter';
import { InsertFunctionCommands } from '../insert-functions/insert-function.commands';
import { withMilliseconds } from '../shared/timestamps';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { optionalBoolean, optionalString, requiredString, settingsMap } from './public-api-input';
import { paginatePublic, type PublicQuery, queryValue } from './public-api-query';
import { PublicApiResources, publicDestinationId } from './public-api-resources';
import { withPublicMask } from './public-destination.presenter';
import { configEntriesOf } from './public-destinations.controller';

const INSTANCE_PATH = '/insert-functions/';

/**
 * An insert-function instance's Public API id: the destination that keeps it and its function id, as
 * one opaque token (a destination has at most one insert function, and the id never changes).
 */
export function publicInsertFunctionInstanceId(
  destination: Pick<DestinationRecord, 'sourceId' | 'destinationSlug'>,
  functionId: string,
): string {
  return Buffer.from(
    `${destination.sourceId}/${destination.destinationSlug}${INSTANCE_PATH}${functionId}`,
  ).toString('base64url');
}

/**
 * Insert-function instances (docs/functions.md §1, the Public API paragraph): v1beta's
 * `…/destinations/{dst}/insert-functions`, by the same use cases (`InsertFunctionCommands`), in the
 * SDK's shapes. `integrationId` is the destination's Public API id; sensitive settings are shown only
 * in `encryptedSettings`, masked with this API's mask.
 */
@ApiTags('Functions')
@PublicApiController('insert-function-instances')
export class PublicInsertFunctionInstancesController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly insertFunctions: InsertFunctionCommands,
    private readonly resources: PublicApiResources,
    private readonly catalog: DestinationCatalog,
  ) {}

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const functionId = requiredString(body, 'functionId');
    const integrationId = requiredString(body, 'integrationId');
    const destination = this.destinationNamed(workspace, integrationId);
    const entry = this.catalog.functionEntry(workspace.slug, functionId, 'INSERT_DESTINATION');
    if (!entry) {
      throw PublicApiError.validation(
        `functionId "${functionId}" is not an INSERT_DESTINATION function of this workspace`,
        'functionId',
      );
    }
    const settings = body.settings === undefined || body.settings === null ? {} : settingsMap(body.settings);
    await this.insertFunctions.create(
      destination,
      {
        functionId,
        enabled: optionalBoolean(body, 'enabled'),
        config: configEntriesOf(settings, entry),
        displayName: optionalString(body, 'name'),
      },
      metadata,
    );
    return { data: { insertFunctionInstance: this.present(this.reread(destination)) } };
  }

  /** Every instance of the workspace, oldest destination first; `functionId` narrows to one function's. */
  @Get()
  list(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    const functionId = queryValue(query, 'functionId');
    const destinations = this.resources
      .destinations(workspace)
      .map(({ destination }) => destination)
      .filter(
        (destination) =>
          destination.insertFunction !== undefined &&
          (functionId === undefined || destination.insertFunction.functionId === functionId),
      );
    const { items, pagination } = paginatePublic(destinations, query);
    return { data: { instances: items.map((destination) => this.present(destination)), pagination } };
  }

  @Get(':instanceId')
  get(@PublicWorkspace() workspace: WorkspaceRecord, @Param('instanceId') instanceId: string) {
    return {
      data: { insertFunctionInstance: this.present(this.instance(workspace, instanceId).destination) },
    };
  }

  /** `enabled` and `name` when present; `settings` merge into the stored ones by key. */
  @Patch(':instanceId')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('instanceId') instanceId: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination, insertFunction } = this.instance(workspace, instanceId);
    const entry = this.catalog.functionEntry(workspace.slug, insertFunction.functionId, 'INSERT_DESTINATION');
    const settings =
      body.settings === undefined || body.settings === null ? undefined : settingsMap(body.settings);
    const enabled = optionalBoolean(body, 'enabled');
    const displayName = optionalString(body, 'name');
    await this.insertFunctions.change(
      destination,
      insertFunction.functionId,
      {
        ...(enabled !== undefined && { enabled }),
        ...(displayName !== undefined && { displayName }),
        ...(settings && entry && { config: configEntriesOf(settings, entry, insertFunction) }),
      },
      metadata,
    );
    return { data: { insertFunctionInstance: this.present(this.reread(destination)) } };
  }

  @Delete(':instanceId')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('instanceId') instanceId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination, insertFunction } = this.instance(workspace, instanceId);
    await this.insertFunctions.delete(destination, insertFunction.functionId, metadata);
    return { data: { status: 'SUCCESS' } };
  }

  /** The destination a body's `integrationId` names in the workspace; 422 naming the field otherwise. */
  private destinationNamed(workspace: WorkspaceRecord, integrationId: string): DestinationRecord {
    try {
      return this.resources.destination(workspace, integrationId).destination;
    } catch {
      throw PublicApiError.validation(
        `integrationId "${integrationId}" is not a destination of this workspace`,
        'integrationId',
      );
    }
  }

  /** The instance an id names in the workspace; another workspace's, or a deleted one, is not found. */
  private instance(
    workspace: WorkspaceRecord,
    instanceId: string,
  ): { destination: DestinationRecord; insertFunction: InsertFunctionRecord } {
    const decoded = Buffer.from(instanceId, 'base64url').toString('utf8');
    const at = decoded.lastIndexOf(INSTANCE_PATH);
    const slash = at > 0 ? decoded.lastIndexOf('/', at - 1) : -1;
    if (slash <= 0) throw PublicApiError.notFound();
    const view = this.readModel.destination(decoded.slice(0, slash), decoded.slice(slash + 1, at));
    const functionId = decoded.slice(at + INSTANCE_PATH.length);
    const insertFunction = view?.destination.insertFunction;
    if (
      !view ||
      view.destination.workspaceSlug !== workspace.slug ||
      !insertFunction ||
      insertFunction.functionId !== functionId
    ) {
      throw PublicApiError.notFound();
    }
    return { destination: view.destination, insertFunction };
  }

  private reread(destination: DestinationRecord): DestinationRecord {
    return this.readModel.destination(destination.sourceId, destination.destinationSlug)!.destination;
  }

  private present(destination: DestinationRecord) {
    const insertFunction = destination.insertFunction!;
    const view = this.readModel.function(destination.workspaceSlug, insertFunction.functionId);
    const entry = this.catalog.functionEntry(
      destination.workspaceSlug,
      insertFunction.functionId,
      'INSERT_DESTINATION',
    );
    return {
      id: publicInsertFunctionInstanceId(destination, insertFunction.functionId),
      name: insertFunction.displayName ?? view?.function.displayName ?? insertFunction.functionId,
      integrationId: publicDestinationId(destination),
      classId: insertFunction.functionId,
      enabled: insertFunction.enabled,
      createdAt: withMilliseconds(insertFunction.createTime),
      updatedAt: withMilliseconds(insertFunction.updateTime),
      ...publicSettings(insertFunction, entry),
    };
  }
}

/** Plain settings in `settings`; sensitive ones, masked, in `encryptedSettings`. */
function publicSettings(
  insertFunction: InsertFunctionRecord,
  entry: CatalogDestinationDefinition | undefined,
) {
  const settings: Record<string, unknown> = {};
  const encryptedSettings: Record<string, unknown> = {};
  for (const setting of entry?.settings ?? []) {
    const value = insertFunction.config[setting.key] ?? setting.defaultValue;
    const secret = secrecyOfSetting(insertFunction.functionId, setting) !== undefined;
    const shown = withPublicMask(presentSettingValue(insertFunction.functionId, setting, value));
    if (secret) {
      if (value !== '') encryptedSettings[setting.key] = shown;
    } else {
      settings[setting.key] = shown;
    }
  }
  return { settings, encryptedSettings };
}
