import { Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConfigReadModel, SourceView } from '@tributary/config-projections';
import { ConfigApiController, ConfigApiError, SourceInPath } from '@tributary/config-api-access';
import { destinationName } from '@tributary/contracts';
import { RecentMessageOutcomes } from './recent-message-outcomes';

const MAX_MESSAGE_IDS = 100;

/**
 * Where recent messages of a source went: per message, the latest outcome for each destination
 * (delivered, filtered, skipped, retried, discarded, dead_lettered). Tributary's own route, read by
 * the console's debugger; answered from the memory of the router that serves the request.
 */
@ApiTags('message deliveries')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/message-deliveries')
export class MessageDeliveriesController {
  constructor(
    private readonly outcomes: RecentMessageOutcomes,
    private readonly readModel: ConfigReadModel,
  ) {}

  @Get()
  list(
    @SourceInPath() { source }: SourceView,
    @Query('message_id') messageIds: string | string[] | undefined,
  ) {
    const ids = [...new Set(messageIds === undefined ? [] : [messageIds].flat())];
    if (ids.length === 0) throw ConfigApiError.invalidArgument('give at least one message_id');
    if (ids.length > MAX_MESSAGE_IDS) {
      throw ConfigApiError.invalidArgument(`give at most ${MAX_MESSAGE_IDS} message_id values`);
    }
    const outcomes = this.outcomes.outcomesOfMessages(source.sourceId, ids);
    return {
      message_deliveries: ids.map((messageId) => ({
        message_id: messageId,
        destinations: (outcomes.get(messageId) ?? [])
          .filter((outcome) => this.readModel.destination(source.sourceId, outcome.destinationSlug))
          .map((outcome) => ({
            destination_name: destinationName({
              workspaceSlug: source.workspaceSlug,
              sourceSlug: source.sourceSlug,
              destinationSlug: outcome.destinationSlug,
            }),
            outcome: outcome.outcome,
            time: outcome.at,
            ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
          })),
      })),
    };
  }
}
