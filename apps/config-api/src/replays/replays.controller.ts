import { Body, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DestinationView } from '@tributary/config-projections';
import { CreateReplayRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  DestinationInPath,
  ResourceLookup,
} from '@tributary/config-api-access';
import { paginate, PageRequest } from '../shared/pagination';
import { ReplayCommands } from './replay.commands';
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
    private readonly replays: ReplayCommands,
    private readonly lookup: ResourceLookup,
  ) {}

  @Post()
  async create(
    @DestinationInPath() { destination }: DestinationView,
    @Body() body: CreateReplayDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { workspaceSlug, sourceSlug, destinationSlug } = destination;
    const replayId = await this.replays.request(destination, body, metadata);
    return presentReplayOf(this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug), replayId);
  }

  @Get()
  list(@DestinationInPath() view: DestinationView, @Query() query: PageRequest) {
    const newestFirst = [...view.replays].reverse();
    const { page, nextPageToken } = paginate(newestFirst, query);
    return {
      replays: page.map((replay) => presentReplay(view.destination, replay)),
      next_page_token: nextPageToken,
    };
  }

  @Get(':replay')
  get(@DestinationInPath() view: DestinationView, @Param('replay') replayId: string) {
    return presentReplayOf(view, replayId);
  }
}

function presentReplayOf(view: DestinationView, replayId: string) {
  const replay = view.replays.find((candidate) => candidate.replayId === replayId);
  if (!replay) throw ConfigApiError.notFound(`replay ${replayId} not found`);
  return presentReplay(view.destination, replay);
}
