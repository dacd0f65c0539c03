import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SecretBox } from '@tributary/auth';
import { catalogSlugOf, destinationDecider, streamNames } from '@tributary/config-domain';
import { CommandRunner, ConfigChange, ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { NormalizedMessage } from '@tributary/contracts';
import { DeadLetter, EVENT_LOG, EventLog } from '@tributary/event-log';
import { randomUUID } from 'node:crypto';
import { destinationConsumerName } from '../destination-consumers/consumer-names';
import { DestinationDeliveries } from '../destination-consumers/destination-deliveries.service';

const PAGE_SIZE = 500;

/**
 * Redrives a destination's dead letters on request: each is sent once more as it was stored; those
 * delivered leave the list (recorded as an event), the others stay with the reason of this attempt.
 */
@Injectable()
export class DeadLetterRedriver implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DeadLetters');
  private stopListening?: () => void;

  constructor(
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly readModel: ConfigReadModel,
    private readonly commands: CommandRunner,
    private readonly deliveries: DestinationDeliveries,
    private readonly secretBox: SecretBox,
  ) {}

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change: ConfigChange) => {
      if (change.kind === 'dead-letter-redrive-requested') {
        void this.redrive(change.view, change.redriveId).catch((error: Error) =>
          this.logger.error(`redrive ${change.redriveId} failed: ${error.message}`),
        );
      }
    });
  }

  onApplicationShutdown(): void {
    this.stopListening?.();
  }

  async redrive(view: DestinationView, redriveId: string): Promise<void> {
    const { sourceId, destinationSlug } = view.destination;
    const pending = (await this.listAll(destinationConsumerName(sourceId, destinationSlug))).filter(
      (letter) => !view.redrivenDeadLetters.has(letter.deadLetterSequence),
    );
    const settings = this.secretBox.revealAll(view.destination.config);
    const delivered: number[] = [];
    const failed: { deadLetterSequence: number; reason: string }[] = [];
    for (const letter of pending) {
      const result = await this.deliveries.deliver(
        catalogSlugOf(view.destination),
        letter.message.payload as unknown as NormalizedMessage,
        settings,
        sourceId,
      );
      if (result.outcome === 'delivered') delivered.push(letter.deadLetterSequence);
      else failed.push({ deadLetterSequence: letter.deadLetterSequence, reason: result.reason });
    }
    await this.commands.execute(
      streamNames.destination(sourceId, destinationSlug),
      destinationDecider,
      { type: 'RecordDeadLetterRedrive', redriveId, delivered, failed, now: new Date().toISOString() },
      { actor: 'system:router', requestId: `redrive-${randomUUID()}`, time: new Date().toISOString() },
    );
  }

  private async listAll(consumerName: string): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    for (let afterSequence = 0; ;) {
      const page = await this.eventLog.listDeadLetters({ consumerName, afterSequence, limit: PAGE_SIZE });
      letters.push(...page);
      if (page.length < PAGE_SIZE) return letters;
      afterSequence = page[page.length - 1].deadLetterSequence;
    }
  }
}
