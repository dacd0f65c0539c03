import { Get, Inject, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import { destinationAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { DestinationView } from '@tributary/config-projections';
import { MASKED_SECRET, destinationName } from '@tributary/contracts';
import { DEAD_LETTERS, type DeadLetters } from '@tributary/event-log';
import type { EventMetadata } from '@tributary/event-store';
import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  DestinationInPath,
} from '@tributary/config-api-access';
import { destinationConsumerName } from '../destination-consumers/consumer-names';

/**
 * Messages a destination never accepted within the retry window, with the attempt history, and
 * the redrive that sends them once more. Served by the process that runs the router.
 */
@ApiTags('dead letters')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/dead-letters')
export class DeadLettersController {
  constructor(
    @Inject(DEAD_LETTERS) private readonly deadLetters: DeadLetters,
    private readonly commands: ConfigCommandHandler,
  ) {}

  @Get()
  async list(
    @DestinationInPath() view: DestinationView,
    @Query() query: { page_size?: string; page_token?: string },
  ) {
    const { destination } = view;
    const pageSize = query.page_size === undefined ? 100 : Number(query.page_size);
    const afterSequence =
      query.page_token === undefined || query.page_token === '' ? 0 : Number(query.page_token);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
      throw ConfigApiError.invalidArgument('page_size must be an integer between 1 and 1000');
    }
    if (!Number.isInteger(afterSequence) || afterSequence < 0) {
      throw ConfigApiError.invalidArgument('page_token is not a token this API returned');
    }
    const letters = await this.deadLetters.listDeadLetters({
      consumerName: destinationConsumerName(destination.sourceId, destination.destinationSlug),
      afterSequence,
      limit: pageSize,
    });
    const name = `${destinationName(destination)}/dead-letters`;
    return {
      dead_letters: letters
        .filter((letter) => !view.redrivenDeadLetters.has(letter.deadLetterSequence))
        .map((letter) => ({
          name: `${name}/${letter.deadLetterSequence}`,
          message_id: letter.message.messageId,
          reason: letter.reason,
          attempts: letter.attempts.map((attempt) => ({
            time: attempt.at.toISOString(),
            outcome: redact(attempt.outcome),
          })),
          dead_letter_time: letter.deadLetteredAt.toISOString(),
          message: letter.message.payload,
        })),
      next_page_token:
        letters.length === pageSize ? String(letters[letters.length - 1].deadLetterSequence) : '',
    };
  }

  @Post('@redrive')
  async redrive(
    @DestinationInPath() { destination }: DestinationView,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const redriveId = `rd_${generateKsuid()}`;
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'RequestDeadLetterRedrive', redriveId, now: metadata.time },
      metadata,
    );
    return { redrive_id: redriveId, state: 'RUNNING' };
  }
}

/** Attempt outcomes are the destination's words; keep them short and free of credentials in URLs. */
function redact(outcome: string): string {
  return outcome.replace(/\/\/[^/@\s]+@/g, `//${MASKED_SECRET}@`).slice(0, 500);
}
