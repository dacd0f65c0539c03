import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { destinationAggregate, DestinationRecord } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import type { CreateReplayRequest } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

/**
 * The replay use case of the Config API, apart from HTTP: the replay's id, the workspace's quota of
 * running replays, and the request read flat or wrapped in `replay`. It ends in one command of the
 * destination's aggregate; the router runs the replay.
 */
@Injectable()
export class ReplayCommands {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  /** Requests a replay of the destination and answers its id (`rp_` and a KSUID). */
  async request(
    destination: DestinationRecord,
    body: CreateReplayRequest,
    metadata: EventMetadata,
  ): Promise<string> {
    const replayId = `rp_${generateKsuid()}`;
    const request = body.replay ?? body;
    this.quotas.assertCanStartReplay(destination.workspaceSlug);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      {
        type: 'RequestReplay',
        replayId,
        startTime: request.start_time ?? '',
        endTime: request.end_time ?? null,
        now: metadata.time,
      },
      metadata,
    );
    return replayId;
  }

  /**
   * Asks the router to stop a running replay: it stops sending, and records the replay CANCELLED
   * with the counts of what it sent (a replay no router runs at the moment is recorded when one does).
   */
  async cancel(destination: DestinationRecord, replayId: string, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'RequestReplayCancel', replayId, now: metadata.time },
      metadata,
    );
  }
}
