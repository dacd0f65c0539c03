import { Injectable } from '@nestjs/common';
import { ConfigApiError } from '@tributary/config-api-access';
import { ConfigCommandHandler } from '@tributary/config-commands';
import {
  destinationAggregate,
  type DestinationRecord,
  insertFunctionSecretsOwner,
  resolveUpdateMask,
} from '@tributary/config-domain';
import type { EventMetadata } from '@tributary/event-store';
import { DestinationCatalog } from '../destinations/destination-catalog';
import {
  ConfigEntryInput,
  DestinationConfigMapper,
  settingDefinitionsOf,
} from '../destinations/destination-config';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

/** Zero values of a masked-but-absent field (docs/config-api.md §1.6); an empty config merges nothing. */
const INSERT_FUNCTION_ZERO_VALUES = { enabled: false, config: [] };

export interface InsertFunctionInput {
  functionId?: string | null;
  enabled?: boolean | null;
  config?: readonly ConfigEntryInput[] | null;
  /** The Public API's `name`. */
  displayName?: string;
}

/**
 * Insert-function instances (docs/functions.md §1 "Instances"), apart from HTTP and shared by v1beta
 * and the Public API: the function resolved among the workspace's INSERT_DESTINATION functions, its
 * settings turned into stored values as a destination's are (secrets encrypted, masks sent back keep
 * them), and one command of the destination's aggregate, which keeps the instance.
 */
@Injectable()
export class InsertFunctionCommands {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly configMapper: DestinationConfigMapper,
    private readonly catalog: DestinationCatalog,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  /** Adds the insert function to the destination and answers its function id. */
  async create(
    destination: DestinationRecord,
    request: InsertFunctionInput,
    metadata: EventMetadata,
    field = 'insert_function',
  ): Promise<string> {
    const functionId = request.functionId;
    if (typeof functionId !== 'string' || functionId === '') {
      throw ConfigApiError.invalidArgument(`${field}.function_id is required: an ifnd_… function id`);
    }
    const entry = this.catalog.requireFunctionEntry(
      destination.workspaceSlug,
      functionId,
      'INSERT_DESTINATION',
      `${field}.function_id`,
    );
    this.quotas.assertWithinConfigBytes(destination.workspaceSlug, request);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      {
        type: 'CreateInsertFunction',
        settings: settingDefinitionsOf(entry),
        insertFunction: {
          functionId,
          // Created disabled unless asked otherwise, as destinations are: nothing changes until it is on.
          enabled: request.enabled ?? false,
          config: this.configMapper.toSettingValues(
            request.config ?? [],
            entry,
            insertFunctionSecretsOwner(destination),
            undefined,
            `${field}.config`,
          ),
          ...(request.displayName !== undefined && { displayName: request.displayName }),
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return functionId;
  }

  /** v1beta's update: what the mask names (`insert_function.enabled`, `insert_function.config`). */
  async update(
    destination: DestinationRecord,
    functionId: string,
    body: { insert_function: Record<string, unknown>; update_mask?: { paths?: string[] | null } | null },
    metadata: EventMetadata,
  ): Promise<void> {
    const changes = resolveUpdateMask(
      'insert_function',
      body.insert_function,
      body.update_mask?.paths ?? undefined,
      INSERT_FUNCTION_ZERO_VALUES,
    );
    await this.change(
      destination,
      functionId,
      {
        enabled: changes.enabled as boolean | undefined,
        config: changes.config as ConfigEntryInput[] | undefined,
      },
      metadata,
    );
  }

  /** Changes `enabled` and merges config entries into the stored values by name. */
  async change(
    destination: DestinationRecord,
    functionId: string,
    changes: { enabled?: boolean; config?: readonly ConfigEntryInput[]; displayName?: string },
    metadata: EventMetadata,
    field = 'insert_function',
  ): Promise<void> {
    const current = requireInsertFunction(destination, functionId);
    // Resolved again on every write: the function may have been deployed with other settings since.
    const entry = this.catalog.requireFunctionEntry(
      destination.workspaceSlug,
      functionId,
      'INSERT_DESTINATION',
      `${field}.function_id`,
    );
    const config =
      changes.config === undefined
        ? undefined
        : this.configMapper.toSettingValues(
            changes.config,
            entry,
            insertFunctionSecretsOwner(destination),
            current,
            `${field}.config`,
          );
    if (config !== undefined) {
      this.quotas.assertWithinConfigBytes(destination.workspaceSlug, config, current.config);
    }
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      {
        type: 'UpdateInsertFunction',
        functionId,
        settings: settingDefinitionsOf(entry),
        now: metadata.time,
        changes: {
          ...(changes.enabled !== undefined && { enabled: changes.enabled }),
          ...(config !== undefined && { config }),
          ...(changes.displayName !== undefined && { displayName: changes.displayName }),
        },
      },
      metadata,
    );
  }

  async delete(destination: DestinationRecord, functionId: string, metadata: EventMetadata): Promise<void> {
    requireInsertFunction(destination, functionId);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'DeleteInsertFunction', functionId },
      metadata,
    );
  }
}

/** The destination's insert function if it is `functionId`'s, else 404 (code 5). */
export function requireInsertFunction(destination: DestinationRecord, functionId: string) {
  const insertFunction = destination.insertFunction;
  if (!insertFunction || insertFunction.functionId !== functionId) {
    throw ConfigApiError.notFound('insert function not found');
  }
  return insertFunction;
}
