import type { EventStore, Subscription } from '@tributary/event-store';
import { ConfigReadModel } from './config-read-model';

/**
 * Keeps a read model in step with the event store: catch-up from the first event, then live.
 * `ready` resolves once the model holds everything stored when it started.
 */
export class ConfigProjectionRunner {
  private subscription?: Subscription;
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private markFailed!: (error: Error) => void;

  constructor(
    private readonly store: EventStore,
    readonly model: ConfigReadModel,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
  }

  start(): Promise<void> {
    this.subscription = this.store.subscribeToAll((event) => this.model.apply(event), {
      after: this.model.currentPosition >= 0n ? this.model.currentPosition : undefined,
      onCaughtUp: () => this.markReady(),
      onError: (error) => this.markFailed(error),
    });
    return this.ready;
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }
}
