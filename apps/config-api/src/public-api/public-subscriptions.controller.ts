import { Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import { ChangeMetadata } from '@tributary/config-api-access';
import { catalogSlugOf, DestinationRecord, type WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { findActionsDestination, mapSubscriptionSecrets } from '@tributary/destinations';
import { MASKED_SECRET } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createHash } from 'node:crypto';
import { DestinationCommands } from '../destinations/destination.commands';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import {
  optionalBoolean,
  optionalString,
  PUBLIC_MASK,
  requiredString,
  settingsMap,
} from './public-api-input';
import { paginatePublic, type PublicQuery } from './public-api-query';
import { PublicApiResources, publicDestinationId } from './public-api-resources';

/** An entry of an Actions destination's `subscriptions` setting, as stored. */
interface StoredSubscription {
  id?: string;
  name?: string;
  subscribe: string;
  partnerAction: string;
  mapping?: Record<string, unknown>;
  enabled?: boolean;
}

/**
 * An entry written without an id (through v1beta) is known by one derived from its action and trigger,
 * the pair that tells entries apart; the first write through this API stores it.
 */
function subscriptionIdOf(entry: StoredSubscription): string {
  return (
    entry.id ??
    createHash('sha256').update(`${entry.partnerAction}\n${entry.subscribe}`).digest('base64url').slice(0, 27)
  );
}

/**
 * Destination subscriptions (docs/public-api.md, "Destination subscriptions"): each is an entry of the
 * Actions destination's `subscriptions` setting, so a write here is a destination update with v1beta's
 * checks, and v1beta sees it at once.
 */
@ApiTags('Destinations')
@PublicApiController('destinations/:destinationId/subscriptions')
export class PublicSubscriptionsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly destinations: DestinationCommands,
    private readonly resources: PublicApiResources,
  ) {}

  @Get()
  list(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('destinationId') destinationId: string,
    @PublicQueryParams() query: PublicQuery,
  ) {
    const { destination } = this.resources.destination(workspace, destinationId);
    const { items, pagination } = paginatePublic(subscriptionsOf(destination), query);
    return { data: { subscriptions: items.map((entry) => present(entry, destination)), pagination } };
  }

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('destinationId') destinationId: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.resources.destination(workspace, destinationId);
    const actions = findActionsDestination(catalogSlugOf(destination));
    if (!actions) {
      throw PublicApiError.validation(
        `${catalogSlugOf(destination)} is not an Actions destination: it has no subscriptions`,
      );
    }
    const actionId = requiredString(body, 'actionId');
    if (!Object.hasOwn(actions.actions, actionId)) {
      throw PublicApiError.validation(
        `actionId "${actionId}" is not an action of ${actions.slug}`,
        'actionId',
      );
    }
    const entry: StoredSubscription = {
      id: generateKsuid(),
      name: optionalString(body, 'name') ?? actions.actions[actionId]!.title,
      subscribe: requiredString(body, 'trigger'),
      partnerAction: actionId,
      mapping:
        body.settings === undefined || body.settings === null
          ? {}
          : withV1betaMasks(settingsMap(body.settings)),
      enabled: optionalBoolean(body, 'enabled') ?? true,
    };
    const written = await this.write(destination, [...subscriptionsOf(destination), entry], metadata);
    return { data: { destinationSubscription: present(find(written, entry.id!), written) } };
  }

  @Get(':id')
  get(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('destinationId') destinationId: string,
    @Param('id') id: string,
  ) {
    const { destination } = this.resources.destination(workspace, destinationId);
    return { data: { subscription: present(find(destination, id), destination) } };
  }

  /** The body is wrapped: `{input: {name?, trigger?, enabled?, settings?}}`; settings replace the mapping. */
  @Patch(':id')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('destinationId') destinationId: string,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.resources.destination(workspace, destinationId);
    const current = find(destination, id);
    const input = settingsMap(body.input ?? {}, 'input');
    const name = optionalString(input, 'name');
    const trigger = optionalString(input, 'trigger');
    const enabled = optionalBoolean(input, 'enabled');
    const changed: StoredSubscription = {
      ...current,
      id,
      ...(name !== undefined && { name }),
      ...(trigger !== undefined && { subscribe: trigger }),
      ...(enabled !== undefined && { enabled }),
      ...(input.settings !== undefined &&
        input.settings !== null && {
          mapping: withV1betaMasks(settingsMap(input.settings, 'input.settings')),
        }),
    };
    const entries = subscriptionsOf(destination).map((entry) =>
      subscriptionIdOf(entry) === id ? changed : entry,
    );
    const written = await this.write(destination, entries, metadata);
    return { data: { subscription: present(find(written, id), written) } };
  }

  @Delete(':id')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('destinationId') destinationId: string,
    @Param('id') id: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.resources.destination(workspace, destinationId);
    find(destination, id);
    await this.write(
      destination,
      subscriptionsOf(destination).filter((entry) => subscriptionIdOf(entry) !== id),
      metadata,
    );
    return { data: { status: 'SUCCESS' } };
  }

  /** Writes the whole list, every entry with its id, through the destination's own update. */
  private async write(
    destination: DestinationRecord,
    entries: StoredSubscription[],
    metadata: EventMetadata,
  ): Promise<DestinationRecord> {
    const value = entries.map((entry) => ({ ...entry, id: subscriptionIdOf(entry) }));
    await this.destinations.change(destination, { config: [{ name: 'subscriptions', value }] }, metadata);
    return this.readModel.destination(destination.sourceId, destination.destinationSlug)!.destination;
  }
}

/** The stored subscriptions; none for a destination that is not an Actions destination. */
function subscriptionsOf(destination: DestinationRecord): StoredSubscription[] {
  if (!findActionsDestination(catalogSlugOf(destination))) return [];
  const value = destination.config.subscriptions;
  return Array.isArray(value) ? (value as StoredSubscription[]) : [];
}

function find(destination: DestinationRecord, id: string): StoredSubscription {
  const entry = subscriptionsOf(destination).find((candidate) => subscriptionIdOf(candidate) === id);
  if (!entry) throw PublicApiError.notFound();
  return entry;
}

/**
 * A mapping as written to this API with each secret header sent back masked (a value with the Public
 * API's bullet in it) turned into v1beta's mask, which keeps the stored value (`DestinationConfigMapper`).
 */
function withV1betaMasks(mapping: Record<string, unknown>): Record<string, unknown> {
  const [entry] = mapSubscriptionSecrets([{ mapping }], ({ value }) =>
    value.includes('\u2022') ? MASKED_SECRET : value,
  ) as { mapping: Record<string, unknown> }[];
  return entry!.mapping;
}

/** A subscription as this API shows it; secret header values in its mapping are masked. */
function present(stored: StoredSubscription, destination: DestinationRecord) {
  const [entry] = mapSubscriptionSecrets([stored], () => PUBLIC_MASK) as StoredSubscription[];
  return {
    id: subscriptionIdOf(stored),
    name: entry!.name ?? entry!.partnerAction,
    actionId: entry!.partnerAction,
    actionSlug: entry!.partnerAction,
    destinationId: publicDestinationId(destination),
    enabled: entry!.enabled ?? true,
    trigger: entry!.subscribe,
    settings: entry!.mapping ?? {},
  };
}
