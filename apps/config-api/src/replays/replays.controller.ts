import { Body, Get, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DestinationView } from '@tributary/config-projections';
import { CreateReplayRequestSchema } from '@tributary/contracts';
import { LEASES, TRACKING_LOG, type Leases, type TrackingLog } from '@tributary/event-log';
import type { EventMetadata } from '@tributary/event-store';
import { replayConsumerName, replayLeaseName, replayProgress, type ReplayProgress } from '@tributary/routing';
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
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
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

  /** `POST …/replays/{id}:cancel`: the replay as it stands, RUNNING with its `cancel_request_time`. */
  @Post(':replay/@cancel')
  async cancel(
    @DestinationInPath() { destination }: DestinationView,
    @Param('replay') replayId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.replays.cancel(destination, replayId, metadata);
    const { workspaceSlug, sourceSlug, destinationSlug } = destination;
    return presentReplayOf(this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug), replayId);
  }

  @Get(':replay')
  async get(@DestinationInPath() view: DestinationView, @Param('replay') replayId: string) {
    const running = view.replays.find((candidate) => candidate.replayId === replayId)?.state === 'RUNNING';
    return presentReplayOf(view, replayId, running ? await this.progressOf(replayId) : null);
  }

  /**
   * How far a running replay got, from the router's own records in the log (its lease and its
   * consumer); null when no router has started it yet, or the log cannot say right now: the replay
   * itself is still answered.
   */
  private async progressOf(replayId: string): Promise<ReplayProgress | null> {
    try {
      const [lease, lag] = await Promise.all([
        this.leases.readLease(replayLeaseName(replayId)),
        this.trackingLog.consumerLag(replayConsumerName(replayId)),
      ]);
      return replayProgress(lease?.data, lag);
    } catch {
      return null;
    }
  }
}

function presentReplayOf(view: DestinationView, replayId: string, progress: ReplayProgress | null = null) {
  const replay = view.replays.find((candidate) => candidate.replayId === replayId);
  if (!replay) throw ConfigApiError.notFound(`replay ${replayId} not found`);
  return presentReplay(view.destination, replay, progress);
}
