import { Body, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import { destinationAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { CreateReplayRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  ResourceLookup,
} from '@tributary/config-api-access';
import { paginate, PageRequest } from '../shared/pagination';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { presentReplay } from './replay.presenter';

class CreateReplayDto extends createZodDto(CreateReplayRequestSchema) {}

/**
 * Replays send a destination the history kept in the log since `start_time` (until `end_time`),
 * even when it is disabled: how a new destination is filled with past messages. The router runs
 * them; its counts appear on the replay once it is done.
 */
@ApiTags('replays')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/replays')
export class ReplaysController {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Body() body: CreateReplayDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const replayId = `rp_${generateKsuid()}`;
    const request = body.replay ?? body;
    this.quotas.assertCanStartReplay(workspaceSlug);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug },
      {
        type: 'RequestReplay',
        replayId,
        startTime: request.start_time ?? '',
        endTime: request.end_time ?? null,
        now: metadata.time,
      },
      metadata,
    );
    return this.get(workspaceSlug, sourceSlug, destinationSlug, replayId);
  }

  @Get()
  list(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Query() query: PageRequest,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const newestFirst = [...view.replays].reverse();
    const { page, nextPageToken } = paginate(newestFirst, query);
    return {
      replays: page.map((replay) => presentReplay(view.destination, replay)),
      next_page_token: nextPageToken,
    };
  }

  @Get(':replay')
  get(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Param('replay') replayId: string,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const replay = view.replays.find((candidate) => candidate.replayId === replayId);
    if (!replay) throw ConfigApiError.notFound(`replay ${replayId} not found`);
    return presentReplay(view.destination, replay);
  }
}
