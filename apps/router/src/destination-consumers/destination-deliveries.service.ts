import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { NormalizedMessage } from '@tributary/contracts';

export type DeliveryAttemptResult =
  | { outcome: 'delivered' }
  | { outcome: 'discard'; reason: string }
  | { outcome: 'retry'; reason: string; retryAfterMs?: number };

/** Sends one message to one destination with the adapter of its catalog entry. */
@Injectable()
export class DestinationDeliveries implements OnApplicationShutdown {
  async deliver(destinationSlug: string, message: NormalizedMessage, settings: Record<string, unknown>): Promise<DeliveryAttemptResult> {
    void message;
    void settings;
    return { outcome: 'discard', reason: `Tributary has no delivery adapter for ${destinationSlug}` };
  }

  async onApplicationShutdown(): Promise<void> {}
}
